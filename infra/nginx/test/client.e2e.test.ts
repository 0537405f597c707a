import { createClipboardClient, createMeetingsClient, createTasksClient } from '@app/client';
import { startStack, type Service, type Stack } from './stack.js';

let stack: Stack;
const keys = {} as Record<Service, string>;

beforeAll(async () => {
  stack = await startStack();
  for (const svc of ['tasks', 'meetings', 'clipboard'] as const) {
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `client-${svc}@example.test`);
    keys[svc] = (await stack.admin(svc, 'create-key', '--account', accountId)).key;
  }
}, 120000);
afterAll(() => stack?.stop());

describe('@app/client against the real gateway', () => {
  it('creates a task and reads it back, and gets the typed error envelope for a missing one', async () => {
    const tasks = createTasksClient({ baseUrl: stack.gateway, apiKey: keys.tasks });
    const created = await tasks.POST('/api/v1/tasks', { body: { title: 'Call the plumber', tags: ['home'] } });
    expect(created.response.status).toBe(201);
    const id = created.data!.item.id;
    const read = await tasks.GET('/api/v1/tasks/{id}', { params: { path: { id } } });
    expect(read.data?.item).toEqual(expect.objectContaining({ id, title: 'Call the plumber', tags: ['home'], subtasks: [] }));
    const list = await tasks.GET('/api/v1/tasks', { params: { query: { view: 'all', limit: 10 } } });
    expect(list.data?.items.map((t) => t.id)).toEqual([id]);
    const missing = await tasks.GET('/api/v1/tasks/{id}', { params: { path: { id: '00000000-0000-4000-8000-000000000000' } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.error.code).toBe('not_found');
  });

  it('creates a person in meetings and lists it', async () => {
    const meetings = createMeetingsClient({ baseUrl: stack.gateway, apiKey: keys.meetings });
    const created = await meetings.POST('/api/people', { body: { name: 'Ada Lovelace', email: 'ada@example.test' } });
    expect(created.response.status).toBe(201);
    const people = await meetings.GET('/api/people', { params: { query: { limit: 10 } } });
    expect(people.data?.items).toEqual([expect.objectContaining({ id: created.data!.id, name: 'Ada Lovelace', archived: false })]);
  });

  it('adds a clipboard item and reads the history, sending the headers it was given', async () => {
    const clipboard = createClipboardClient({ baseUrl: stack.gateway, apiKey: keys.clipboard, headers: { 'X-Request-Id': 'client-e2e-1' } });
    const created = await clipboard.POST('/api/clipboard', { body: { type: 'text', content: 'hello from the client', source: 'api' } });
    expect(created.response.status).toBe(201);
    expect(created.response.headers.get('x-request-id')).toBe('client-e2e-1');
    const history = await clipboard.GET('/api/clipboard', { params: { query: { limit: 5 } } });
    expect(history.data?.items.map((i) => i.content)).toEqual(['hello from the client']);
  });

  it('sends the key as a bearer token: another service\'s key is 401', async () => {
    const wrong = createTasksClient({ baseUrl: stack.gateway, apiKey: keys.meetings });
    const res = await wrong.GET('/api/v1/tasks');
    expect(res.response.status).toBe(401);
    expect(res.error?.error.code).toBe('unauthorized');
  });
});
