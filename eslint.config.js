import js from '@eslint/js'
import jest from 'eslint-plugin-jest'
import tseslint from 'typescript-eslint'

export default tseslint.config(
  { ignores: ['dist/', '.build/', 'node_modules/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }]
    }
  },
  {
    // Type-aware: a promise nobody awaits is a request or a cancel that may never happen.
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error'
    }
  },
  {
    // The core runs under every host: GitHub's packages belong to the action's front end alone.
    files: ['src/**/*.ts'],
    ignores: ['src/action/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@actions/*'], message: 'Only src/action/ talks to GitHub: use host().' },
            { group: ['**/action/*', '**/cli/*'], message: 'The core never imports a host.' }
          ]
        }
      ]
    }
  },
  {
    files: ['__tests__/**/*.ts'],
    ...jest.configs['flat/recommended'],
    rules: {
      ...jest.configs['flat/recommended'].rules,
      // Tables of cases, with checks that run inside the test, and helpers that assert are how
      // these suites are written.
      'jest/expect-expect': ['error', { assertFunctionNames: ['expect*'] }],
      'jest/no-standalone-expect': 'off'
    }
  }
)
