import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import type { components as ClipboardComponents, operations as ClipboardOperations, paths as ClipboardPaths } from './generated/clipboard.js';
import type { components as MeetingsComponents, operations as MeetingsOperations, paths as MeetingsPaths } from './generated/meetings.js';
import type { components as TasksComponents, operations as TasksOperations, paths as TasksPaths } from './generated/tasks.js';

import { subscribe, type SubscribeOptions, type Subscription } from './subscribe.js';

export { StreamRefused, type SubscribeOptions, type Subscription } from './subscribe.js';
export type { ClipboardComponents, ClipboardOperations, ClipboardPaths, MeetingsComponents, MeetingsOperations, MeetingsPaths, TasksComponents, TasksOperations, TasksPaths };

export interface ServiceClientOptions extends Omit<ClientOptions, 'baseUrl' | 'headers'> {
  /** The gateway (`http://localhost:8080` under `npm start`) or the service's own address. */
  baseUrl: string;
  /** An API key of that service (keys are per service); sent as `Authorization: Bearer <key>`. */
  apiKey: string;
  /** Sent with every request, e.g. `X-Timezone`. */
  headers?: Record<string, string>;
}

/** A service's typed client, plus `subscribe`: its live change stream, resumed by itself. */
export type ServiceClient<Paths extends object, Change> = Client<Paths> & {
  /** Opens the change stream; each change (as the feed returns it) goes to `onChange`, in order, once. */
  subscribe(options: SubscribeOptions<Change>): Subscription;
};

function create<Paths extends object, Change>({ apiKey, headers, ...options }: ServiceClientOptions, streamPath: string): ServiceClient<Paths, Change> {
  const auth = { ...headers, Authorization: `Bearer ${apiKey}` };
  const client = createClient<Paths>({ ...options, headers: auth });
  const target = { baseUrl: options.baseUrl, path: streamPath, headers: auth, ...(options.fetch ? { fetch: options.fetch as typeof fetch } : {}) };
  return Object.assign(client, { subscribe: (o: SubscribeOptions<Change>) => subscribe<Change>(target, o) });
}

export type TasksChange = TasksComponents['schemas']['Change'];
export type MeetingsChange = MeetingsComponents['schemas']['Change'];
export type ClipboardChange = ClipboardComponents['schemas']['Change'];

/** A typed client of the tasks API (`client.GET('/api/v1/tasks', { params: { query: { view: 'today' } } })`); `subscribe` streams the changes feed. */
export const createTasksClient = (options: ServiceClientOptions): ServiceClient<TasksPaths, TasksChange> => create(options, '/api/v1/tasks/changes/stream');

/** A typed client of the meetings API; `subscribe` streams GET /api/changes. */
export const createMeetingsClient = (options: ServiceClientOptions): ServiceClient<MeetingsPaths, MeetingsChange> => create(options, '/api/changes/stream');

/** A typed client of the clipboard API; `subscribe` streams the pull feed. */
export const createClipboardClient = (options: ServiceClientOptions): ServiceClient<ClipboardPaths, ClipboardChange> => create(options, '/api/clipboard/pull/stream');
