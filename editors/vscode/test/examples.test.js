// The grammar on every real program in examples/: no token is scoped as
// invalid, every keyword of the language is scoped as a keyword (or, where
// the language lets a keyword name a field, as a field), and comments and
// strings are what they look like. Run by the Go test TestGrammarOnExamples
// (cmd/hale/internal/dap); by hand: node --test test/examples.test.js
'use strict';

const { test } = require('node:test');
const assert = require('node:assert');
const fs = require('node:fs');
const path = require('node:path');
const vsctm = require('vscode-textmate');
const oniguruma = require('vscode-oniguruma');

const root = path.join(__dirname, '..');
const examples = path.join(root, '..', '..', 'examples');

async function loadGrammar() {
  const wasm = fs.readFileSync(require.resolve('vscode-oniguruma/release/onig.wasm'));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const registry = new vsctm.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (patterns) => new oniguruma.OnigScanner(patterns),
      createOnigString: (s) => new oniguruma.OnigString(s),
    }),
    loadGrammar: async (scopeName) => {
      if (scopeName !== 'source.hale') return null;
      const file = path.join(root, 'syntaxes', 'hale.tmLanguage.json');
      return vsctm.parseRawGrammar(fs.readFileSync(file, 'utf8'), file);
    },
  });
  return registry.loadGrammar('source.hale');
}

// The reserved words of docs/language.md §3.
const KEYWORDS = new Set(`import const type enum topic fn locus main on start var let if else while for
  in match return break continue publish spawn as pinned pool async_io bind stdin to true false try`.split(/\s+/));

function programs(dir) {
  const out = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isDirectory()) out.push(...programs(p));
    else if (entry.name.endsWith('.hl')) out.push(p);
  }
  return out;
}

test('the grammar scopes every example sensibly', async () => {
  const grammar = await loadGrammar();
  const files = programs(examples);
  assert.ok(files.length >= 10, `only ${files.length} examples found under ${examples}`);
  const problems = [];
  for (const file of files) {
    let state = vsctm.INITIAL;
    const lines = fs.readFileSync(file, 'utf8').split('\n');
    lines.forEach((line, i) => {
      const r = grammar.tokenizeLine(line, state);
      state = r.ruleStack;
      for (const t of r.tokens) {
        const text = line.slice(t.startIndex, t.endIndex);
        const scopes = t.scopes.join(' ');
        const where = `${path.relative(examples, file)}:${i + 1}:${t.startIndex + 1} ${JSON.stringify(text)} (${scopes})`;
        if (scopes.includes('invalid')) problems.push(`invalid: ${where}`);
        const inText = /comment|string/.test(scopes);
        if (KEYWORDS.has(text) && !inText && !/keyword|storage|constant\.language|variable\.other\.(member|property)/.test(scopes)) {
          problems.push(`keyword not scoped as one: ${where}`);
        }
        if (text.startsWith('//') && !scopes.includes('comment') && !scopes.includes('string')) {
          problems.push(`comment not scoped as one: ${where}`);
        }
      }
    });
  }
  assert.deepStrictEqual(problems, []);
});
