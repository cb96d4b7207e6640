import * as path from 'node:path';
import { defineConfig } from 'vitest/config';

// Unit tests run without VS Code: `vscode` resolves to a small hand-written mock.
export default defineConfig({
  resolve: { alias: { vscode: path.resolve(import.meta.dirname, 'test/__mocks__/vscode.ts') } },
  test: { include: ['test/**/*.test.ts'], environment: 'node' },
});
