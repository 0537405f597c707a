import { execFile } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const generate = join(__dirname, '..', 'scripts', 'generate.mjs');
const generated = join(__dirname, '..', 'src', 'generated');

// Each test runs the generator over the three documents in a process of its own: seconds alone,
// over 30 s once in a fresh clone's npm test with every core taken (stop 69).
jest.setTimeout(120_000);

async function check(dir?: string): Promise<{ code: number; stderr: string }> {
  try {
    await run(process.execPath, [generate, '--check', ...(dir ? ['--out', dir] : [])]);
    return { code: 0, stderr: '' };
  } catch (err) {
    const e = err as { code: number; stderr: string };
    return { code: e.code, stderr: e.stderr };
  }
}

describe('src/generated (openapi-typescript output of the three documents)', () => {
  it('matches what the current OpenAPI documents generate', async () => {
    expect(await check()).toEqual({ code: 0, stderr: '' });
  });

  it('is reported, naming the file, when it drifts from a document', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'client-types-'));
    try {
      cpSync(generated, dir, { recursive: true });
      appendFileSync(join(dir, 'meetings.ts'), '\nexport type Stale = true;\n');
      const result = await check(dir);
      expect(result.code).toBe(1);
      expect(result.stderr).toContain('meetings.ts differs from the meetings OpenAPI document');
      expect(result.stderr).not.toContain('tasks.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
