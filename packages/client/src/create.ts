import createClient, { type Client, type ClientOptions } from 'openapi-fetch';
import { subscribe, type SubscribeOptions, type Subscription } from './subscribe.js';

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

export function create<Paths extends object, Change>(
  { apiKey, headers, ...options }: ServiceClientOptions,
  streamPath: string,
): ServiceClient<Paths, Change> {
  const auth = { ...headers, Authorization: `Bearer ${apiKey}` };
  const client = createClient<Paths>({ ...options, headers: auth });
  const target = {
    baseUrl: options.baseUrl,
    path: streamPath,
    headers: auth,
    ...(options.fetch ? { fetch: options.fetch as typeof fetch } : {}),
  };
  return Object.assign(client, { subscribe: (o: SubscribeOptions<Change>) => subscribe<Change>(target, o) });
}
