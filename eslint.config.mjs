// The lint gate's ESLint half (`npm run lint`, run by `npm test`): typescript-eslint's type-checked
// recommended rules over every TypeScript file, each file checked against the tsconfig that
// builds or typechecks it. Import cycles are checked by madge and unused code by knip (same gate).
import { execFileSync } from 'node:child_process';
import { createNodeResolver, importX } from 'eslint-plugin-import-x';
import tseslint from 'typescript-eslint';

// The floors of packages/auth (packages/auth/README.md draws them): each room imports only the
// rooms below it. `runtime` on top composes everything and is not restricted.
const AUTH = 'packages/auth/src';
const floors = {
  database: [], // the ground: the pool, transactions, migrations
  identity: ['database'],
  oauth: ['identity', 'database'],
  mcp: ['identity', 'database'],
  webhooks: ['identity', 'database'],
  streams: ['identity', 'database'],
  'account-page': ['oauth', 'identity', 'database'], // the browser face of identity and oauth
};

/**
 * Fails the config when a block's `files` glob matches no file of the repository (tracked or
 * new): a rule for a file that was moved or removed would otherwise guard nothing, silently.
 */
function everyGlobMatches(configs) {
  let paths;
  try {
    paths = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], {
      cwd: import.meta.dirname,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }).split('\n');
  } catch {
    return configs; // not a git checkout: nothing to list the files by
  }
  const pattern = (glob) =>
    new RegExp(
      `^${glob
        .replace(/[.+^$()|[\]\\]/g, '\\$&')
        .replace(/\{([^}]*)\}/g, (_, names) => `(${names.split(',').join('|')})`)
        .replace(/\*\*\/|\*\*|\*/g, (m) => ({ '**/': '(.*/)?', '**': '.*', '*': '[^/]*' })[m])}`,
    );
  const dead = [...new Set(configs.flatMap((config) => config.files ?? []))].filter(
    (glob) => !paths.some((path) => pattern(glob).test(path)),
  );
  if (dead.length > 0) throw new Error(`eslint.config.mjs: files globs that match no file: ${dead.join(', ')}`);
  return configs;
}

export default everyGlobMatches(
  tseslint.config(
    // The new-service scaffold is a template (`__name__` placeholders), linted as the app it makes.
    {
      ignores: [
        '**/node_modules/',
        '**/dist/',
        '**/.turbo/',
        'packages/client/src/generated/',
        'packages/devstack/scaffold/',
      ],
    },
    {
      files: ['**/*.ts'],
      extends: [tseslint.configs.recommendedTypeChecked],
      languageOptions: {
        parserOptions: {
          // The first tsconfig that includes a file types it: tests are in the *.test.json ones.
          project: [
            'apps/*/tsconfig.test.json',
            'packages/auth/tsconfig.json',
            'packages/http-errors/tsconfig.json',
            'packages/devstack/tsconfig.json',
            'packages/client/tsconfig.test.json',
            'infra/nginx/tsconfig.json',
            'bench/tsconfig.json',
          ],
          tsconfigRootDir: import.meta.dirname,
        },
      },
      linterOptions: { reportUnusedDisableDirectives: 'error' },
      rules: {
        // A leading underscore marks a binding kept on purpose: a parameter a signature requires,
        // or a property taken out of an object so the rest can be passed on.
        '@typescript-eslint/no-unused-vars': [
          'error',
          { argsIgnorePattern: '^_', varsIgnorePattern: '^_', ignoreRestSiblings: true },
        ],
        // `async` on a function that implements a Promise-returning interface (a store, an MCP or
        // kysely callback) without awaiting anything is the plain way to write it; the rules that
        // catch real promise mistakes (no-floating-promises, no-misused-promises) stay on.
        '@typescript-eslint/require-await': 'off',
      },
    },
    {
      // Tests assert on what a client sees: supertest's `res.body` and fetch's `json()` are `any` by
      // design, and every response is already checked against the service's OpenAPI document
      // (devstack's checked-request), so typing each body again would add casts, not safety.
      // devstack's shared suites and response checks, and the bench's load scripts, read responses
      // the same way.
      files: [
        'apps/*/test/**',
        'packages/*/test/**',
        'infra/nginx/test/**',
        'infra/nginx/soak/**',
        'packages/devstack/src/{accounts-suite,admin-command,platform-suite,checked-request,envelope,error-catalog,openapi-check,test-app,webhook-examples-suite,webhook-receiver,webhook-replay-suite,webhook-suite}.ts',
        'bench/src/**',
      ],
      rules: {
        '@typescript-eslint/no-unsafe-member-access': 'off', // res.body is any (see above)
        '@typescript-eslint/no-unsafe-assignment': 'off', // res.body is any (see above)
        '@typescript-eslint/no-unsafe-argument': 'off', // res.body is any (see above)
        '@typescript-eslint/no-unsafe-call': 'off', // res.body is any (see above)
        '@typescript-eslint/no-unsafe-return': 'off', // res.body is any (see above)
        '@typescript-eslint/no-explicit-any': 'off', // helpers that pass res.body on say so with any
      },
    },
    {
      // A declaration is loaded by everything that lists services (the admin command, generate, the
      // dev stack's tests) and must not load the app, its routes or its OpenAPI document (slow, and
      // none of them is needed there): the app comes through its `load()`, a lazy import.
      files: ['apps/*/src/service.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: ['./app.js', './routes/*', './openapi.js', './openapi/*', './mcp.js', './mcp-tools.js'],
                message: 'a declaration loads no app, routes or documents: its load() imports the app',
              },
            ],
          },
        ],
      },
    },
    {
      // An app's floors (STYLE.md habit 3; farm-studio draws them): the domain writes no SQL, the
      // repositories do, and neither imports the OpenAPI document, the routes or the app above them
      // (the document imports the domain's limits and events, not the other way round).
      files: ['apps/*/src/domain/**/*.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            paths: [
              {
                name: 'kysely',
                importNames: ['sql', 'CompiledQuery', 'RawBuilder'],
                message: 'the domain writes no SQL: a repository (db/) does',
              },
              {
                name: '@app/auth/webhooks',
                importNames: ['noSubscriberFor', 'emitEventWithData'],
                message: 'these build SQL: a repository (db/) uses them',
              },
            ],
            patterns: [
              {
                group: ['../openapi.js', '../openapi/*', '../routes/*', '../app.js'],
                message: 'the domain imports nothing above it (limits live in the domain; the document imports them)',
              },
            ],
          },
        ],
      },
    },
    {
      files: ['apps/*/src/db/**/*.ts'],
      rules: {
        'no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: ['**/openapi.js', '**/openapi/*', '**/routes/*', '**/app.js', '**/domain/*'],
                message:
                  "a repository imports nothing above it: the domain passes what it needs (a limit, a serializer's fields)",
              },
            ],
          },
        ],
      },
    },
    {
      // The floors above, kept: an import from a room to one beside it or above it fails the gate.
      files: [`${AUTH}/**/*.ts`],
      plugins: { 'import-x': importX },
      // The sources import `./x.js` for `./x.ts` (NodeNext), so the resolver is told to try .ts first.
      settings: {
        'import-x/resolver-next': [
          createNodeResolver({ extensions: ['.ts', '.js'], extensionAlias: { '.js': ['.ts', '.js'] } }),
        ],
      },
      rules: {
        'import-x/no-restricted-paths': [
          'error',
          {
            basePath: import.meta.dirname,
            zones: Object.entries(floors).map(([room, below]) => ({
              target: `${AUTH}/${room}`,
              from: AUTH,
              except: [room, ...below].map((r) => `./${r}`),
              message: `packages/auth/src/${room} may import only ${below.length ? below.join(', ') : 'nothing else of packages/auth'} (the floors in packages/auth/README.md)`,
            })),
          },
        ],
      },
    },
    {
      // Migrations take Kysely<any> on purpose (STYLE.md, kysely's docs): a migration must keep
      // working when the schema types of later code change, so it never imports them.
      files: [
        'apps/*/src/db/migrations/**',
        'packages/auth/src/identity/tables.ts',
        'packages/auth/src/webhooks/tables.ts',
      ],
      rules: { '@typescript-eslint/no-explicit-any': 'off' }, // Kysely<any> (see above)
    },
    {
      // Plain JavaScript (build scripts, jest configs, the account page's browser script): no types
      // to check against, so only the rules that need none.
      files: ['**/*.{js,mjs,cjs}'],
      extends: [tseslint.configs.recommended],
      linterOptions: { reportUnusedDisableDirectives: 'error' },
    },
    {
      files: ['**/*.cjs'],
      // CommonJS files (jest configs, scripts/system-packages.cjs) load modules with require().
      rules: { '@typescript-eslint/no-require-imports': 'off' },
    },
    {
      // A function you can hold in your head (DESIGN.md "Layout"): none over 150 lines in the
      // source (a suite is one function per describe group). Tests are exempt: a describe callback
      // reads as a list of cases.
      files: [
        'apps/*/src/**/*.{ts,js,mjs,cjs}',
        'packages/*/src/**/*.{ts,js,mjs,cjs}',
        'bench/src/**/*.{ts,js,mjs,cjs}',
        'scripts/**/*.{ts,js,mjs,cjs}',
      ],
      ignores: ['**/test/**', '**/*.test.ts'],
      rules: { 'max-lines-per-function': ['error', { max: 150, skipBlankLines: true, skipComments: true }] },
    },
  ),
);
