import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['e2e/**/*.mjs', 'esbuild.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', setTimeout: 'readonly', URL: 'readonly', fetch: 'readonly' } },
  },
  {
    rules: {
      eqeqeq: ['error', 'always'],
      'no-console': ['error', { allow: ['error'] }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  { files: ['e2e/**/*.mjs'], rules: { 'no-console': 'off' } },
  {
    // The panel's nodes are plain data, unit-tested without VS Code: only tree.ts turns them into TreeItems.
    files: ['src/treeNodes.ts', 'test/treeNodes.test.ts'],
    rules: { 'no-restricted-imports': ['error', { paths: [{ name: 'vscode', message: 'treeNodes.ts is plain data; tree.ts talks to VS Code.' }] }] },
  },
);
