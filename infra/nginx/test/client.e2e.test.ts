import * as typedClients from '@app/client';
import { createClipboardClient, createMeetingsClient, createTasksClient, type ServiceClientOptions } from '@app/client';
import { SERVICES, declared, homePath, startStack, type Service, type Stack, STACK_START_MS } from './stack.js';

let stack: Stack;
const keys = {} as Record<Service, string>;

beforeAll(async () => {
  stack = await startStack();
  for (const svc of SERVICES) {
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `client-${svc}@example.test`);
    keys[svc] = (await stack.admin(svc, 'create-key', '--account', accountId)).key;
  }
}, STACK_START_MS);
afterAll(() => stack?.stop());

/** The generated client of a service (`create<Title>Client`), called by a path as a string. */
type UntypedClient = { GET(path: string): Promise<{ response: Response }> };
const clientOf = (svc: Service, options: ServiceClientOptions): UntypedClient =>
  (typedClients as unknown as Record<string, (o: ServiceClientOptions) => UntypedClient>)[
    `create${declared(svc).title}Client`
  ]!(options);

describe('@app/client against the real gateway', () => {
  it.each(SERVICES)(
    "has a client of %s that reads its main list with its key, and is refused with another's",
    async (svc) => {
      const own = await clientOf(svc, { baseUrl: stack.gateway, apiKey: keys[svc] }).GET(homePath(svc));
      expect(own.response.status).toBe(200);
      const other = SERVICES.find((s) => s !== svc)!;
      const foreign = await clientOf(svc, { baseUrl: stack.gateway, apiKey: keys[other] }).GET(homePath(svc));
      expect(foreign.response.status).toBe(401);
    },
  );

  it('creates a task and reads it back, and gets the typed error envelope for a missing one', async () => {
    const tasks = createTasksClient({ baseUrl: stack.gateway, apiKey: keys.tasks });
    const created = await tasks.POST('/api/v1/tasks', { body: { title: 'Call the plumber', tags: ['home'] } });
    expect(created.response.status).toBe(201);
    const id = created.data!.item.id;
    const read = await tasks.GET('/api/v1/tasks/{id}', { params: { path: { id } } });
    expect(read.data?.item).toEqual(
      expect.objectContaining({ id, title: 'Call the plumber', tags: ['home'], subtasks: [] }),
    );
    const list = await tasks.GET('/api/v1/tasks', { params: { query: { view: 'all', limit: 10 } } });
    expect(list.data?.items.map((t) => t.id)).toEqual([id]);
    const missing = await tasks.GET('/api/v1/tasks/{id}', {
      params: { path: { id: '00000000-0000-4000-8000-000000000000' } },
    });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not_found');
  });

  it('runs a batch in one request: an add, a subtask naming it by tempId, a command that fails on its own', async () => {
    const { accountId } = await stack.admin('tasks', 'create-account', '--email', 'client-batch@example.test');
    const tasks = createTasksClient({
      baseUrl: stack.gateway,
      apiKey: (await stack.admin('tasks', 'create-key', '--account', accountId)).key,
    });
    const ran = await tasks.batch([
      { type: 'add', tempId: 'trip', args: { title: 'Plan the trip' } },
      { type: 'add', args: { title: 'Book the train', parentId: 'trip' } },
      { type: 'complete', taskId: '00000000-0000-4000-8000-000000000000' },
    ]);
    expect(ran.response.status).toBe(200);
    const { results, tempIds, cursor } = ran.data!;
    const parent = tempIds.trip!;
    expect(results.map((r) => r.status)).toEqual([201, 201, 404]);
    expect(results.every((r) => /^[0-9a-f-]{36}$/.test(r.id))).toBe(true);
    expect(results[1]!.item).toMatchObject({ title: 'Book the train', parentId: parent });
    expect(results[2]!.error).toMatchObject({ code: 'not_found' });
    const read = await tasks.GET('/api/v1/tasks/{id}', { params: { path: { id: parent } } });
    expect(read.data?.item.subtasks.map((t) => t.title)).toEqual(['Book the train']);
    // The same command ids again apply nothing twice; the cursor is just after the batch.
    const again = await tasks.batch(
      results
        .slice(0, 1)
        .map((r) => ({ id: r.id, type: 'add' as const, tempId: 'trip', args: { title: 'Plan the trip' } })),
    );
    expect(again.data?.tempIds.trip).toBe(parent);
    const feed = await tasks.GET('/api/v1/tasks/changes', { params: { query: { cursor } } });
    expect(feed.data?.changes).toEqual([]);
    const failed = await tasks.batch([{ type: 'delete', taskId: 'nowhere' }], { atomic: true });
    expect(failed.response.status).toBe(409);
    expect(failed.error?.error.code).toBe('batch_failed');
  });

  it('creates a person in meetings and lists it', async () => {
    const meetings = createMeetingsClient({ baseUrl: stack.gateway, apiKey: keys.meetings });
    const created = await meetings.POST('/api/people', { body: { name: 'Ada Lovelace', email: 'ada@example.test' } });
    expect(created.response.status).toBe(201);
    const people = await meetings.GET('/api/people', { params: { query: { limit: 10 } } });
    expect(people.data?.items).toEqual([
      expect.objectContaining({ id: created.data!.id, name: 'Ada Lovelace', archived: false }),
    ]);
  });

  it('adds a clipboard item and reads the history, sending the headers it was given', async () => {
    const clipboard = createClipboardClient({
      baseUrl: stack.gateway,
      apiKey: keys.clipboard,
      headers: { 'X-Request-Id': 'client-e2e-1' },
    });
    const created = await clipboard.POST('/api/clipboard', {
      body: { type: 'text', content: 'hello from the client', source: 'api' },
    });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('x-request-id')).toBe('client-e2e-1');
    const history = await clipboard.GET('/api/clipboard', { params: { query: { limit: 5 } } });
    expect(history.data?.items.map((i) => i.content)).toEqual(['hello from the client']);
  });

  it('seals every item with a passphrase: the service holds only ciphertext, the sealing client reads it back, another passphrase is refused by name', async () => {
    const { accountId } = await stack.admin('clipboard', 'create-account', '--email', 'client-sealed@example.test');
    const apiKey = (await stack.admin('clipboard', 'create-key', '--account', accountId)).key;
    const secret = 'the vault code is 0451';
    const sealing = createClipboardClient({
      baseUrl: stack.gateway,
      apiKey,
      seal: { passphrase: 'correct horse battery staple' },
    });
    const created = await sealing.POST('/api/clipboard', { body: { type: 'text', content: secret, source: 'api' } });
    expect(created.response.status).toBe(201);
    expect(created.data).toMatchObject({ type: 'text', content: secret, sealed: true });
    // The same text again merges by its keyed dedupeKey, as an equal text does.
    expect(
      (await sealing.POST('/api/clipboard', { body: { type: 'text', content: secret, source: 'api' } })).response
        .status,
    ).toBe(200);

    const raw = await (
      await fetch(`${stack.gateway}/api/clipboard`, { headers: { Authorization: `Bearer ${apiKey}` } })
    ).json();
    expect(JSON.stringify(raw)).not.toContain('vault');
    expect(raw.items).toEqual([
      expect.objectContaining({ type: 'sealed', keyId: expect.stringMatching(/^s1\./), dedupeKey: expect.any(String) }),
    ]);
    const settings = await (
      await fetch(`${stack.gateway}/api/settings`, { headers: { Authorization: `Bearer ${apiKey}` } })
    ).json();
    expect(settings.sealSalt).toMatch(/^[A-Za-z0-9_-]{22}$/);

    const history = await sealing.GET('/api/clipboard', { params: { query: { limit: 5 } } });
    expect(history.data?.items.map((i) => [i.type, i.content])).toEqual([['text', secret]]);
    const pulled = await sealing.GET('/api/clipboard/pull');
    expect(pulled.data?.changes.map((ch) => (ch.data as { content?: string } | null)?.content)).toContain(secret);
    const streamed = await new Promise<string>((resolve, reject) => {
      const sub = sealing.subscribe({
        onChange: (ch) => {
          if (ch.entity === 'item') {
            sub.close();
            resolve((ch.data as { content: string }).content);
          }
        },
        onError: reject,
      });
    });
    expect(streamed).toBe(secret);
    console.log(
      `A sealed round trip through the typed client:\n  stored  ${JSON.stringify(raw.items[0])}\n  read    ${JSON.stringify(history.data?.items[0])}`,
    );

    const wrong = createClipboardClient({ baseUrl: stack.gateway, apiKey, seal: { passphrase: 'Tr0ub4dor&3' } });
    await expect(wrong.GET('/api/clipboard')).rejects.toThrow(/wrong passphrase/);
  }, 60_000);

  it("sends the key as a bearer token: another service's key is 401", async () => {
    const wrong = createTasksClient({ baseUrl: stack.gateway, apiKey: keys.meetings });
    const res = await wrong.GET('/api/v1/tasks');
    expect(res.response.status).toBe(401);
    expect(res.error?.error.code).toBe('unauthorized');
  });
});
