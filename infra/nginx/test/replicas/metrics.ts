import type { Instance } from '@app/devstack';

/**
 * Requests one instance has answered, from its own `/metrics` (the request histogram's counts),
 * for the lines whose labels include every given `label="value"`.
 */
export async function served(instance: Instance, labels: Record<string, string>): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${instance.port}/metrics`)).text();
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let total = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('http_request_duration_seconds_count{')) continue;
    if (wanted.every((w) => line.includes(w))) total += Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return total;
}

/** Runs `task` for 0..count-1 with at most `concurrency` at once; results in order. */
export async function pool<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results = new Array<T>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) {
        const i = next++;
        results[i] = await task(i);
      }
    }),
  );
  return results;
}

/** Counts values: `{ "200": 598, "429": 2 }`. */
export function tally(values: Array<string | number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const v of values) out[String(v)] = (out[String(v)] ?? 0) + 1;
  return out;
}
