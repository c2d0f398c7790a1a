// A debug session of `hale dap` driven by @vscode/debugadapter-testsupport,
// the client VS Code's own debug adapters are tested with. Run by the Go test
// TestVSCodeClient (cmd/hale/internal/dap), which builds hale and sets
// HALE_BIN; by hand: HALE_BIN=/path/to/hale node --test test/dap.test.js
'use strict';

const { describe, it, before, after } = require('node:test');
const assert = require('node:assert');
const cp = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { DebugClient } = require('@vscode/debugadapter-testsupport');

const HALE = process.env.HALE_BIN;
if (!HALE) {
  throw new Error('HALE_BIN is not set: point it at a hale binary (go build -o hale ./cmd/hale)');
}

// The line numbers below are the program's: keep them in step.
const PROGRAM = `topic Job { n: int }

fn fee(n: int) -> int {
    let f = n * 2;
    return f;
}

locus Feeder {
    on start {
        for i in 1..4 {
            publish Job { n: i };
        }
    }
}

locus Worker {
    var total: int = 0;
    on Job(j) {
        let f = fee(j.n);
        total += f;
        print("total " + str(total));
    }
}

main {
    spawn Feeder;
    spawn Worker on pinned;
}
`;
const TOTAL_LINE = 20; // total += f;

// The machine running the tests is slow and shared: generous timeouts.
const TIMEOUT = 120000;

for (const engine of ['wasm', 'native']) {
  describe(`hale dap (${engine} engine) with the VS Code test client`, { timeout: 4 * TIMEOUT }, () => {
    let dir, program, recording, dc;

    before(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'hale-dap-'));
      program = path.join(dir, 'app.hl');
      recording = path.join(dir, 'run.halerec');
      fs.writeFileSync(program, PROGRAM);
      const run = cp.spawnSync(HALE, ['run', '--engine', engine, 'app.hl'], {
        cwd: dir,
        env: { ...process.env, LOTUS_OBS_RECORD: 'run.halerec' },
        encoding: 'utf8',
      });
      assert.strictEqual(run.status, 0, `recording the program failed: ${run.stderr}`);
    });

    after(async () => {
      if (dc) {
        await dc.stop().catch(() => {});
      }
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it('launches a recording, stops at a breakpoint, steps back and runs to the end', async () => {
      dc = new DebugClient(HALE, 'dap', 'hale');
      dc.defaultTimeout = TIMEOUT;
      let stdout = '';
      dc.on('output', (event) => {
        if (event.body.category === 'stdout') {
          stdout += event.body.output;
        }
      });
      await dc.start();

      // initialize, launch with stopOnEntry; step back is announced only
      // after launch, for a recording.
      const capabilities = dc.waitForEvent('capabilities', TIMEOUT);
      const initialized = dc.waitForEvent('initialized', TIMEOUT);
      const init = await dc.initializeRequest({ adapterID: 'hale', linesStartAt1: true, columnsStartAt1: true, pathFormat: 'path' });
      assert.ok(!init.body.supportsStepBack, 'initialize must not announce supportsStepBack');
      assert.deepStrictEqual(init.body.exceptionBreakpointFilters.map((f) => f.filter), ['trap']);
      await dc.launchRequest({ program, recording, stopOnEntry: true, engine });
      assert.strictEqual((await capabilities).body.capabilities.supportsStepBack, true);
      await initialized;

      // A breakpoint on `total += f;` and one on a blank line.
      const bps = await dc.setBreakpointsRequest({
        source: { path: program },
        breakpoints: [{ line: TOTAL_LINE }, { line: 7 }],
      });
      assert.strictEqual(bps.body.breakpoints[0].verified, true);
      assert.strictEqual(bps.body.breakpoints[1].verified, false);
      assert.match(bps.body.breakpoints[1].message, /line 7/);

      const entry = dc.waitForEvent('stopped', TIMEOUT);
      await dc.configurationDoneRequest();
      assert.strictEqual((await entry).body.reason, 'entry');

      // continue to the breakpoint
      const hit = dc.waitForEvent('stopped', TIMEOUT);
      await dc.continueRequest({ threadId: (await entry).body.threadId });
      const stop = await hit;
      assert.strictEqual(stop.body.reason, 'breakpoint');
      assert.strictEqual(stop.body.allThreadsStopped, true);

      const threads = await dc.threadsRequest();
      assert.ok(threads.body.threads.some((t) => t.id === stop.body.threadId), 'the stopped thread is listed');

      const stack = await dc.stackTraceRequest({ threadId: stop.body.threadId });
      const top = stack.body.stackFrames[0];
      assert.strictEqual(top.line, TOTAL_LINE);
      assert.strictEqual(top.source.path, program);
      assert.match(top.name, /Worker\.on Job/);

      const scopes = await dc.scopesRequest({ frameId: top.id });
      const names = scopes.body.scopes.map((s) => s.name);
      assert.deepStrictEqual(names, ['Locals', 'State', 'Message']);
      const locals = await dc.variablesRequest({ variablesReference: scopes.body.scopes[0].variablesReference });
      const f = locals.body.variables.find((v) => v.name === 'f');
      assert.ok(f, `no local f in ${JSON.stringify(locals.body.variables)}`);
      assert.strictEqual(f.value, '2');
      const state = await dc.variablesRequest({ variablesReference: scopes.body.scopes[1].variablesReference });
      assert.strictEqual(state.body.variables.find((v) => v.name === 'total').value, '0');
      const evaluated = await dc.evaluateRequest({ expression: 'j.n', frameId: top.id, context: 'hover' });
      assert.strictEqual(evaluated.body.result, '1');

      // one step forward, then back to the breakpoint
      let stepped = dc.waitForEvent('stopped', TIMEOUT);
      await dc.nextRequest({ threadId: stop.body.threadId });
      assert.strictEqual((await stepped).body.reason, 'step');
      let after = await dc.stackTraceRequest({ threadId: stop.body.threadId });
      assert.strictEqual(after.body.stackFrames[0].line, TOTAL_LINE + 1);

      stepped = dc.waitForEvent('stopped', TIMEOUT);
      await dc.stepBackRequest({ threadId: stop.body.threadId });
      assert.strictEqual((await stepped).body.reason, 'step');
      after = await dc.stackTraceRequest({ threadId: stop.body.threadId });
      assert.strictEqual(after.body.stackFrames[0].line, TOTAL_LINE);

      // clear the breakpoints and run to the end: exited, then terminated;
      // the program's output came as output events, each line once though
      // stepping back replayed the run.
      await dc.setBreakpointsRequest({ source: { path: program }, breakpoints: [] });
      const exited = dc.waitForEvent('exited', TIMEOUT);
      const terminated = dc.waitForEvent('terminated', TIMEOUT);
      await dc.continueRequest({ threadId: stop.body.threadId });
      assert.strictEqual((await exited).body.exitCode, 0);
      await terminated;
      assert.strictEqual(stdout, 'total 2\ntotal 6\ntotal 12\n');
    });
  });
}
