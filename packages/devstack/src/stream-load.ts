import type { Service } from './product.js';

/** Each service's change stream (the three the soak and the memory tests drive). */
export const STREAM_PATHS: Partial<Record<Service, string>> = {
  tasks: '/api/v1/tasks/changes/stream',
  meetings: '/api/changes/stream',
  clipboard: '/api/clipboard/pull/stream',
};

/** `length` characters that differ for each `n` (clipboard keeps one item per content). */
const filler = (n: number, length: number) => `${n} `.padEnd(length, 'abcdefghij');

/** The `n`th calendar day from 2000-01-01 (a daily note's date). */
const day = (n: number) => new Date(Date.UTC(2000, 0, 1) + n * 86_400_000).toISOString().slice(0, 10);

/**
 * The largest change each service streams, as one request: a clipboard item of 120 KB (items hold
 * up to 131,072 characters), a task with its notes at their 20,000 characters, a daily note with
 * both fields at their 50,000.
 */
const LARGEST: Partial<Record<Service, (n: number) => { method: string; path: string; body: unknown }>> = {
  clipboard: (n) => ({
    method: 'POST',
    path: '/api/clipboard',
    body: { type: 'text', content: filler(n, 120 * 1024), source: 'api' },
  }),
  tasks: (n) => ({ method: 'POST', path: '/api/v1/tasks', body: { title: `Task ${n}`, notes: filler(n, 20_000) } }),
  meetings: (n) => ({
    method: 'PUT',
    path: `/api/notes/${day(n)}`,
    body: { yesterday: filler(n, 50_000), today: filler(n + 1, 50_000) },
  }),
};

/** About how many bytes one of those changes takes as a stream event. */
export const LARGEST_CHANGE_BYTES: Partial<Record<Service, number>> = {
  clipboard: 120 * 1024,
  tasks: 20_000,
  meetings: 100_000,
};

/** Writes `count` of the service's largest changes for `auth` at `origin` (the service or the gateway), four at a time. */
export async function writeLargestChanges(
  origin: string,
  service: Service,
  auth: string,
  count: number,
): Promise<void> {
  const largest = LARGEST[service];
  if (!largest) throw new Error(`no largest change is written for ${service}: add it to LARGEST in stream-load.ts`);
  let next = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      for (let n = next++; n < count; n = next++) {
        const { method, path, body } = largest(n);
        const res = await fetch(`${origin}${path}`, {
          method,
          headers: { Authorization: auth, 'Content-Type': 'application/json' },
          body: JSON.stringify(body),
        });
        if (res.status >= 300)
          throw new Error(`${service} ${method} ${path}: ${res.status} ${(await res.text()).slice(0, 200)}`);
      }
    }),
  );
}
