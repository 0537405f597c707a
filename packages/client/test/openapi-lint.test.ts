import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const root = join(__dirname, '..', '..', '..');
const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' };

describe('npm run lint:openapi (redocly lint, recommended rules)', () => {
  it('finds no error and no warning in any of the three documents', async () => {
    const { stdout } = await run(process.execPath, [join(__dirname, '..', 'scripts', 'lint-openapi.mjs')], { env, timeout: 60_000 });
    for (const service of ['tasks', 'meetings', 'clipboard']) expect(stdout).toContain(`${service}: 0 errors, 0 warnings`);
  }, 90_000);

  it('flags an API operation without an operationId or a 4xx answer under the repository config', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'lint-'));
    try {
      const file = join(dir, 'doc.json');
      writeFileSync(file, JSON.stringify({
        openapi: '3.1.0',
        info: { title: 'x', version: '1', license: { name: 'Proprietary', identifier: 'LicenseRef-Proprietary' } },
        servers: [{ url: '/' }],
        security: [],
        paths: { '/api/things': { get: { summary: 'things', responses: { '200': { description: 'ok' } } } } },
      }));
      const failed = await run(join(root, 'node_modules', '.bin', 'redocly'), ['lint', file, '--format=json', '--config', join(root, 'redocly.yaml')], { env, timeout: 60_000 })
        .then(() => null, (err: { stdout: string }) => err.stdout);
      expect(failed).not.toBeNull();
      const rules = JSON.parse(failed!.slice(failed!.indexOf('{'))).problems.map((p: { ruleId: string }) => p.ruleId);
      expect(rules).toEqual(expect.arrayContaining(['operation-operationId', 'rule/api-operation-4xx']));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 90_000);
});
