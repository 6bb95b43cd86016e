// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

const NODE_BUILTINS = [
  'assert',
  'buffer',
  'child_process',
  'crypto',
  'dns',
  'events',
  'fs',
  'fs/promises',
  'http',
  'https',
  'net',
  'os',
  'path',
  'process',
  'stream',
  'tls',
  'url',
  'util',
  'worker_threads',
  'zlib',
  'perf_hooks',
  'module',
  'v8',
  'vm',
];

/** The core (everything under src/ but the Node, Google and Postgres adapters and the test kit) must stay edge-safe. */
const edgeSafe = {
  patterns: [
    {
      group: ['node:*'],
      message:
        'The core is edge-safe: node: modules only in src/adapters/node, src/adapters/google and src/adapters/postgres.',
    },
    {
      group: ['googleapis', '@googleapis/*', 'google-auth-library'],
      message: 'googleapis only in src/adapters/google.',
    },
    { group: ['vitest', 'vitest/*'], message: 'vitest only in src/testing and test/.' },
  ],
  paths: NODE_BUILTINS.map((name) => ({ name, message: 'The core is edge-safe: no Node built-ins.' })),
};

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'docs/api/**',
      'node_modules/**',
      'types/**',
      'coverage/**',
      'test-artifacts/**',
      '.tmp/**',
      'src/pdf/fonts/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-function-type': 'off',
    },
  },
  {
    files: ['src/**/*.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector: "ObjectExpression > Property[kind='get'], ObjectExpression > Property[kind='set']",
          message:
            'No accessor in an object literal: V8 may come to allocate such a literal in the old generation, where each one made per call keeps what it reaches alive through young collections. Use a class (docs/performance.md, "The route\'s context, allocated in the old generation").',
        },
      ],
    },
  },
  {
    files: ['src/**/*.ts'],
    ignores: [
      'src/adapters/node/**',
      'src/adapters/google/**',
      'src/adapters/postgres/**',
      'src/node/**',
      'src/testing/**',
      'src/cli/**',
    ],
    rules: {
      'no-restricted-imports': ['error', edgeSafe],
      'no-restricted-globals': [
        'error',
        { name: 'Buffer', message: 'Use Uint8Array.' },
        { name: 'process', message: 'The core is edge-safe.' },
      ],
    },
  },
  {
    files: ['src/testing/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ group: ['node:*'], message: 'The test kit is edge-safe.' }] },
      ],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', require: 'readonly', module: 'writable' },
    },
  },
);
