import type { ServiceClient, ServiceClientOptions } from './create.js';
import {
  createTasksClient as createPlainTasksClient,
  type TasksChange,
  type TasksPaths,
} from './services.generated.js';

type BatchBody = TasksPaths['/api/v1/tasks/batch']['post']['requestBody']['content']['application/json'];
/** A command of POST /api/v1/tasks/batch; `id` may be left out (the client makes one). */
export type TaskCommand = Omit<BatchBody['commands'][number], 'id'> & { id?: string };

/**
 * POST /api/v1/tasks/batch on `client`: the commands in order, in one request (`atomic`: all or
 * nothing). A command without `id` gets a new UUID, sent and answered in its result; an offline
 * client that retries gives the same ids again, so that nothing is applied twice.
 */
const batchOf =
  (client: ServiceClient<TasksPaths, TasksChange>) =>
  (commands: TaskCommand[], { atomic }: { atomic?: boolean } = {}) =>
    client.POST('/api/v1/tasks/batch', {
      body: {
        commands: commands.map((c) => ({ ...c, id: c.id ?? globalThis.crypto.randomUUID() })),
        ...(atomic === undefined ? {} : { atomic }),
      },
    });

/** The tasks client: the generated one, plus `batch`. */
export type TasksClient = ServiceClient<TasksPaths, TasksChange> & { batch: ReturnType<typeof batchOf> };

/** A typed client of the tasks API (see createTasksClient in services.generated.ts), with `batch`. */
export function createTasksClient(options: ServiceClientOptions): TasksClient {
  const client = createPlainTasksClient(options);
  return Object.assign(client, { batch: batchOf(client) });
}
