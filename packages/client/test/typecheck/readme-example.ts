// The README's example, compiled by `npm run typecheck` so the README cannot drift from the types.
import { createTasksClient } from '../../src/index.js';

export async function readmeExample(): Promise<void> {
  const tasks = createTasksClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.TASKS_KEY! });

  const { data, error } = await tasks.POST('/api/v1/tasks', { body: { title: 'Call the plumber', tags: ['home'] } });
  if (error) throw new Error(`${error.error.code}: ${error.error.message}`);
  const today = await tasks.GET('/api/v1/tasks', { params: { query: { view: 'today' } } });
  await tasks.POST('/api/v1/tasks/{id}/complete', { params: { path: { id: data.item.id } } });
  console.log(today.data?.items.map((task) => task.title));

  const batched = await tasks.batch([
    { type: 'add', tempId: 'trip', args: { title: 'Plan the trip' } },
    { type: 'add', args: { title: 'Book the train', parentId: 'trip' } },
  ]);
  console.log(
    batched.data?.tempIds.trip,
    batched.data?.results.map((r) => r.status),
  ); // <id>, [201, 201]
}
