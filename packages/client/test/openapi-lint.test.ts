import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '..', '..', '..');
/** Every declared service (an app with `src/service.ts`): each has a document the lint covers. */
const services = readdirSync(join(root, 'apps')).filter((app) =>
  existsSync(join(root, 'apps', app, 'src', 'service.ts')),
);
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

describe('npm run lint:openapi (redocly lint, recommended rules; spectral:oas and the OWASP API ruleset)', () => {
  it("finds no Redocly error or warning and no Spectral error in any service's document", async () => {
    const { stdout } = await run(process.execPath, [join(__dirname, '..', 'scripts', 'lint-openapi.mjs')], {
      env,
      // Two linters over three documents: about a minute alone, over two under a whole test run.
      timeout: 240_000,
    });
    expect(services.length).toBeGreaterThanOrEqual(3);
    for (const service of services) {
      expect(stdout).toContain(`${service}: 0 errors, 0 warnings`);
      expect(stdout).toMatch(new RegExp(`${service}: spectral 0 errors, \\d+ warnings`));
    }
  }, 270_000);

  it('turns a Spectral rule off only with a written reason beside it', () => {
    const lines = readFileSync(join(root, '.spectral.yaml'), 'utf8').split('\n');
    const offs = lines.map((line, i) => ({ line, i })).filter(({ line }) => /:\s*off\s*$/.test(line));
    expect(offs.length).toBeGreaterThan(0);
    for (const { i } of offs) {
      // The comment block above the rule (or above the block of rules it belongs to).
      let j = i - 1;
      while (j >= 0 && !/^\s*#/.test(lines[j]!) && /:\s*off\s*$|^\s*(rules|- files):?|^\s*- "/.test(lines[j]!)) j--;
      expect([lines[i], lines[j]]).toEqual([lines[i], expect.stringMatching(/^\s*#\s*\S.{20,}/)]);
    }
  });

  it('flags a string input without maxLength, an array input without maxItems and an unbounded integer input under the repository ruleset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'spectral-'));
    try {
      const file = join(dir, 'doc.json');
      writeFileSync(
        file,
        JSON.stringify({
          openapi: '3.1.0',
          info: {
            title: 'x',
            version: '1',
            description: 'x',
            contact: { name: 'x' },
            license: { name: 'Proprietary' },
          },
          servers: [{ url: 'https://api.example.test', 'x-internal': false }],
          paths: {
            '/things': {
              post: {
                operationId: 'createThing',
                description: 'x',
                tags: [],
                requestBody: {
                  content: {
                    'application/json': {
                      schema: {
                        type: 'object',
                        properties: {
                          name: { type: 'string' },
                          tags: { type: 'array', items: { type: 'string', maxLength: 5 } },
                          n: { type: 'integer' },
                        },
                      },
                    },
                  },
                },
                responses: { '201': { description: 'ok' } },
              },
            },
          },
        }),
      );
      const failed = await run(
        join(root, 'node_modules', '.bin', 'spectral'),
        ['lint', file, '--ruleset', join(root, '.spectral.yaml'), '--format=json', '--quiet'],
        { env, timeout: 60_000 },
      ).then(
        () => null,
        (err: { stdout: string }) => err.stdout,
      );
      expect(failed).not.toBeNull();
      const rules = JSON.parse(failed!.slice(failed!.indexOf('[')))
        .filter((p: { severity: number }) => p.severity === 0)
        .map((p: { code: string }) => p.code);
      expect(rules).toEqual(
        expect.arrayContaining([
          'input-string-limit',
          'input-array-limit',
          'input-integer-format',
          'input-integer-limit',
        ]),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);

  it('flags an API operation without an operationId or a 4xx answer under the repository config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-'));
    try {
      const file = join(dir, 'doc.json');
      writeFileSync(
        file,
        JSON.stringify({
          openapi: '3.1.0',
          info: { title: 'x', version: '1', license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
          servers: [{ url: '/' }],
          security: [],
          paths: { '/api/things': { get: { summary: 'things', responses: { '200': { description: 'ok' } } } } },
        }),
      );
      const failed = await run(
        join(root, 'node_modules', '.bin', 'redocly'),
        ['lint', file, '--format=json', '--config', join(root, 'redocly.yaml')],
        { env, timeout: 60_000 },
      ).then(
        () => null,
        (err: { stdout: string }) => err.stdout,
      );
      expect(failed).not.toBeNull();
      const rules = JSON.parse(failed!.slice(failed!.indexOf('{'))).problems.map((p: { ruleId: string }) => p.ruleId);
      expect(rules).toEqual(expect.arrayContaining(['operation-operationId', 'rule/api-operation-4xx']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
