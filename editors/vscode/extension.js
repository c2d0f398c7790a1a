// The Hale extension's code: it starts `hale dap` (the path set in
// `hale.path`) as the debug adapter of launch configurations of type
// "hale", and fills in a configuration for the current file when there is
// no launch.json. Highlighting needs no code: package.json contributes the
// TextMate grammar in syntaxes/.
'use strict';

const vscode = require('vscode');

function activate(context) {
  context.subscriptions.push(
    vscode.debug.registerDebugAdapterDescriptorFactory('hale', {
      createDebugAdapterDescriptor() {
        const command = vscode.workspace.getConfiguration('hale').get('path') || 'hale';
        return new vscode.DebugAdapterExecutable(command, ['dap']);
      },
    }),
    vscode.debug.registerDebugConfigurationProvider('hale', {
      // F5 without a launch.json: debug the .hl file in the editor.
      resolveDebugConfiguration(folder, config) {
        if (!config.type && !config.request && !config.name) {
          const editor = vscode.window.activeTextEditor;
          if (editor && editor.document.languageId === 'hale') {
            config.type = 'hale';
            config.request = 'launch';
            config.name = 'Debug the current Hale program';
            config.program = '${file}';
            config.stopOnEntry = true;
          }
        }
        if (!config.program && !config.bundle) {
          return vscode.window
            .showInformationMessage('Hale: set "program" (an .hl file) or "bundle" in the launch configuration')
            .then(() => undefined);
        }
        return config;
      },
    })
  );
}

function deactivate() {}

module.exports = { activate, deactivate };
