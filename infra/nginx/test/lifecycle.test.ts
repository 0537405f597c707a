import { connect } from 'node:net';
import pg from 'pg';
import { startStack, type Stack } from './stack.js';

let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
}, 60000);
afterAll(() => stack?.stop());

const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => { socket.destroy(); resolve(false); });
    socket.once('error', () => resolve(true));
  });

describe('graceful shutdown on SIGTERM', () => {
  it('stops accepting, finishes the request in flight, then exits 0', async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', 'drain@example.test');
    const { key } = await stack.admin('tasks', 'create-key', '--account', accountId);
    const headers = { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' };
    const base = `http://127.0.0.1:${stack.ports.tasks}`;
    const created = await fetch(`${base}/api/v1/tasks`, { method: 'POST', headers, body: JSON.stringify({ title: 'before' }) });
    const { item } = (await created.json()) as { item: { id: string } };

    // Hold the task's row lock so the PATCH below stays in flight.
    const blocker = new pg.Client({ connectionString: stack.databaseUrl });
    await blocker.connect();
    await blocker.query('begin');
    await blocker.query('select id from tasks.tasks where id = $1 for update', [item.id]);
    const inFlight = fetch(`${base}/api/v1/tasks/${item.id}`, { method: 'PATCH', headers, body: JSON.stringify({ title: 'during shutdown' }) });
    await new Promise((r) => setTimeout(r, 300));

    const service = stack.process('tasks');
    const exited = new Promise<number | null>((resolve) => service.once('exit', (code) => resolve(code)));
    service.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 300));
    expect(await refused(stack.ports.tasks)).toBe(true);
    expect(service.exitCode).toBeNull();

    await blocker.query('commit');
    await blocker.end();
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { item: { title: string } }).item.title).toBe('during shutdown');
    expect(await exited).toBe(0);
  });
});
