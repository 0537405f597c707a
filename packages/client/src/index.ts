import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components as ClipboardComponents, operations as ClipboardOperations, paths as ClipboardPaths } from './generated/clipboard.js';
import type { components as MeetingsComponents, operations as MeetingsOperations, paths as MeetingsPaths } from './generated/meetings.js';
import type { components as TasksComponents, operations as TasksOperations, paths as TasksPaths } from './generated/tasks.js';

export type { ClipboardComponents, ClipboardOperations, ClipboardPaths, MeetingsComponents, MeetingsOperations, MeetingsPaths, TasksComponents, TasksOperations, TasksPaths };

export interface ServiceClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The gateway (`http://localhost:8080` under `npm start`) or the service's own address. */
  baseUrl: string;
  /** An API key of that service (keys are per service); sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Sent with every request, e.g. `X-Timezone`. */
  headers?: Record<string, string>;
}

function create<Paths extends object>({ apiKey, headers, ...options }: ServiceClientOptions): Client<Paths> {
  return createClient<Paths>({ ...options, headers: { ...headers, Authorization: `Bearer ${apiKey}` } });
}

/** A typed client of the tasks API (`client.GET('/api/v1/tasks', { params: { query: { view: 'today' } } })`). */
export const createTasksClient = (options: ServiceClientOptions): Client<TasksPaths> => create<TasksPaths>(options);

/** A typed client of the meetings API. */
export const createMeetingsClient = (options: ServiceClientOptions): Client<MeetingsPaths> => create<MeetingsPaths>(options);

/** A typed client of the clipboard API. */
export const createClipboardClient = (options: ServiceClientOptions): Client<ClipboardPaths> => create<ClipboardPaths>(options);
