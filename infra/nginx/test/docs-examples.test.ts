import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { transformSync } from '@swc/core';
import { repoRoot } from '@app/devstack';
import { SERVICES, startStack, type Service, type Stack } from './stack.js';

/**
 * Every code block of README.md and docs/*.md that a `<!-- run -->` line precedes runs here,
 * against one product stack: sh/bash through bash (curl fails on an HTTP error), ts/js with
 * node after swc strips the types (`@app/client` resolves), a JSON MCP config by connecting to
 * each of its servers and listing the tools. The placeholders are the gateway's address
 * `http://localhost:8080` and the keys `$TASKS_KEY`, `$MEETINGS_KEY`, `$CLIPBOARD_KEY` (in JSON
 * `${TASKS_KEY}`, as Claude Code expands them), plus `$GATEWAY` and `$DATABASE_URL`.
 * `<!-- run until="text" -->` marks a block that runs until it prints that text (a stream).
 */
interface Example {
  where: string;
  lang: string;
  code: string;
  until?: string;
}

const guides = [
  'README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

function examplesOf(file: string): Example[] {
  const lines = readFileSync(join(repoRoot, file), 'utf8').split('\n');
  const found: Example[] = [];
  lines.forEach((line, i) => {
    const marker = /^<!-- run(?: until="([^"]+)")? -->$/.exec(line.trim());
    if (!marker) return;
    const fence = /^```(\w+)$/.exec(lines[i + 1] ?? '');
    const end = lines.indexOf('```', i + 2);
    if (!fence || end < 0) throw new Error(`${file}:${i + 1}: <!-- run --> is not followed by a fenced code block`);
    found.push({
      where: `${file}:${i + 2}`,
      lang: fence[1]!,
      code: lines.slice(i + 2, end).join('\n'),
      until: marker[1],
    });
  });
  return found;
}

const examples = guides.flatMap(examplesOf);
const scratch = join(repoRoot, 'infra', 'nginx', 'node_modules', '.cache', 'docs-examples');
let stack: Stack;
const keys = {} as Record<Service, string>;

beforeAll(async () => {
  // As `npm start` runs them, which is what the guides describe.
  const asStarted = { WEBHOOK_ALLOW_PRIVATE: '1' };
  stack = await startStack(Object.fromEntries(SERVICES.map((svc) => [svc, asStarted])));
  for (const svc of SERVICES) {
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `docs-${svc}@example.test`);
    keys[svc] = (await stack.admin(svc, 'create-key', '--account', accountId)).key;
  }
  mkdirSync(scratch, { recursive: true });
}, 120000);
afterAll(async () => {
  rmSync(scratch, { recursive: true, force: true });
  await stack?.stop();
});

function placeholders(code: string): string {
  return code.replaceAll('http://localhost:8080', stack.gateway);
}

function env(): NodeJS.ProcessEnv {
  return {
    ...process.env,
    GATEWAY: stack.gateway,
    DATABASE_URL: stack.databaseUrl,
    TASKS_KEY: keys.tasks,
    MEETINGS_KEY: keys.meetings,
    CLIPBOARD_KEY: keys.clipboard,
  };
}

/** Runs a program to its end (or, with `until`, until its output shows that text); rejects with its output otherwise. */
function run(command: string, argv: string[], example: Example): Promise<void> {
  const child = spawn(command, argv, { cwd: repoRoot, env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  return new Promise((resolve, reject) => {
    const fail = (why: string) => reject(new Error(`${example.where}: ${why}\n${output}`));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(example.until ? `"${example.until}" did not appear within 45 s` : 'still running after 45 s');
    }, 45000);
    const read = (d: Buffer) => {
      output += d.toString();
      if (example.until && output.includes(example.until)) {
        clearTimeout(timer);
        child.kill('SIGTERM');
        resolve();
      }
    };
    child.stdout.on('data', read);
    child.stderr.on('data', read);
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0 && !example.until) resolve();
      else fail(`exited with ${code}`);
    });
  });
}

async function connectEach(example: Example): Promise<void> {
  const expanded = placeholders(example.code).replace(
    /\$\{(TASKS|MEETINGS|CLIPBOARD)_KEY\}/g,
    (_, svc: string) => keys[svc.toLowerCase() as Service],
  );
  const config = JSON.parse(expanded) as {
    mcpServers: Record<string, { url: string; headers?: Record<string, string> }>;
  };
  for (const [name, server] of Object.entries(config.mcpServers)) {
    const client = new Client({ name: 'docs-examples', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(server.url), { requestInit: { headers: server.headers } }),
    );
    const { tools } = await client.listTools();
    await client.close();
    if (tools.length === 0) throw new Error(`${example.where}: server "${name}" lists no tools`);
  }
}

async function runExample(example: Example): Promise<void> {
  const code = placeholders(example.code);
  switch (example.lang) {
    case 'sh':
    case 'bash':
      return run(
        'bash',
        ['-euo', 'pipefail', '-c', `curl() { command curl --silent --show-error --fail-with-body "$@"; }\n${code}`],
        example,
      );
    case 'ts':
    case 'js': {
      const file = join(scratch, `${example.where.replace(/[/:.]/g, '_')}.mjs`);
      writeFileSync(
        file,
        transformSync(code, {
          filename: 'example.ts',
          jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
          module: { type: 'es6' },
        }).code,
      );
      return run(process.execPath, [file], example);
    }
    case 'json':
      return connectEach(example);
    default:
      throw new Error(`${example.where}: no runner for \`\`\`${example.lang}`);
  }
}

describe('the runnable examples of README.md and docs/', () => {
  it('every guide has one', () => {
    const without = guides.filter((g) => !examples.some((e) => e.where.startsWith(`${g}:`)));
    expect(without).toEqual([]);
  });

  it.each(examples.map((e) => [e.where, e] as const))(
    '%s',
    async (_where, example) => {
      await runExample(example);
    },
    60000,
  );
});
