// Compiled by `npm run typecheck` and by test/types.test.ts, never run. Each @ts-expect-error
// marks a call the generated types must refuse: if one ever typechecks, tsc reports the
// directive as unused and the typecheck fails.
import { createClipboardClient, createMeetingsClient, createTasksClient } from '../../src/index.js';

const options = { baseUrl: 'http://localhost:8080', apiKey: 'key' };

export async function wrongFields(): Promise<unknown[]> {
  const tasks = createTasksClient(options);
  const meetings = createMeetingsClient(options);
  const clipboard = createClipboardClient(options);
  const { data } = await tasks.GET('/api/v1/tasks/{id}', { params: { path: { id: 'x' } } });
  return [
    // @ts-expect-error a task has a `title`, not a `name`
    await tasks.POST('/api/v1/tasks', { body: { name: 'Buy milk' } }),
    // @ts-expect-error the list query parameter is `view`, not `show`
    await tasks.GET('/api/v1/tasks', { params: { query: { show: 'today' } } }),
    // @ts-expect-error a task read has no `name`
    data?.item.name,
    // @ts-expect-error a person has a `name`, not a `fullName`
    await meetings.POST('/api/people', { body: { fullName: 'Ada' } }),
    // @ts-expect-error a clipboard item's content field is `content`, not `text`
    await clipboard.POST('/api/clipboard', { body: { type: 'text', text: 'hello', source: 'api' } }),
    // @ts-expect-error a batch command's type is `add`, not `create`
    await tasks.batch([{ type: 'create', args: { title: 'Buy milk' } }]),
    // @ts-expect-error there is no /api/v1/task path
    await tasks.GET('/api/v1/task'),
  ];
}
