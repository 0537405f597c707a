/** What {@link subscribe} is told. */
export interface SubscribeOptions<C> {
  /** Where to start: a cursor of the feed, or the last event id kept from an earlier run. None: the initial sync. */
  cursor?: string;
  /** Called for each change, in order, once; the next one waits until a returned promise settles. */
  onChange(change: C, id: string): void | Promise<void>;
  /** Hears each dropped connection or refused attempt the subscription recovers from by reconnecting. */
  onError?(err: Error): void;
  /** Wait before reconnecting when the server names none (`retry:`, `Retry-After`); default 1000 ms. */
  retryMs?: number;
}

/** A live subscription: it reconnects by itself, resuming after the last change it delivered. */
export interface Subscription {
  /** The id of the last change delivered: keep it to resume later with `cursor`. */
  readonly lastEventId: string | undefined;
  /** Ends the subscription; `done` then resolves. */
  close(): void;
  /**
   * Resolves after {@link close}; rejects (with `status`) when the service refuses the stream for
   * good: 400 (bad cursor), 401, 403, 410 (cursor expired: sync again without one).
   */
  readonly done: Promise<void>;
}

/** Where a stream is and how to reach it. */
export interface StreamTarget {
  baseUrl: string;
  path: string;
  headers: Record<string, string>;
  fetch?: typeof fetch;
}

export class StreamRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the stream was refused: HTTP ${status} ${body}`);
  }
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/**
 * Holds the service's change stream (Server-Sent Events) open and hands each change to
 * `onChange`. When the connection drops, the server restarts (it says `retry:`) or answers 429 or
 * 5xx, it connects again with `Last-Event-ID`: the changes after the last one delivered, once each.
 */
export function subscribe<C>(target: StreamTarget, options: SubscribeOptions<C>): Subscription {
  const abort = new AbortController();
  const doFetch = target.fetch ?? fetch;
  let lastEventId: string | undefined;
  let retryMs = options.retryMs ?? 1000;
  const report = (err: unknown) => options.onError?.(err instanceof Error ? err : new Error(String(err)));

  async function connect(): Promise<void> {
    const start =
      lastEventId === undefined && options.cursor !== undefined ? `?cursor=${encodeURIComponent(options.cursor)}` : '';
    const res = await doFetch(`${target.baseUrl.replace(/\/$/, '')}${target.path}${start}`, {
      headers: {
        ...target.headers,
        Accept: 'text/event-stream',
        ...(lastEventId !== undefined ? { 'Last-Event-ID': lastEventId } : {}),
      },
      signal: abort.signal,
    });
    if (res.status !== 200 || !res.body) {
      const body = await res.text().catch(() => '');
      if (res.status === 429 || res.status >= 500) {
        const after = Number(res.headers.get('retry-after'));
        throw Object.assign(new StreamRefused(res.status, body), {
          retryAfterMs: Number.isFinite(after) && after > 0 ? after * 1000 : undefined,
        });
      }
      throw Object.assign(new StreamRefused(res.status, body), { fatal: true });
    }
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n?/g, '\n');
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const fields: Record<string, string> = {};
        for (const line of block.split('\n')) {
          if (line === '' || line.startsWith(':')) continue;
          const colon = line.indexOf(':');
          const name = colon < 0 ? line : line.slice(0, colon);
          const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
          fields[name] = name === 'data' && fields.data !== undefined ? `${fields.data}\n${value}` : value;
        }
        if (fields.retry !== undefined && /^\d+$/.test(fields.retry)) retryMs = Number(fields.retry);
        if (fields.event === 'change' && fields.data !== undefined && fields.id !== undefined) {
          await options.onChange(JSON.parse(fields.data) as C, fields.id);
          lastEventId = fields.id;
        }
      }
    }
  }

  const done = (async () => {
    while (!abort.signal.aborted) {
      let wait = retryMs;
      try {
        await connect();
        if (!abort.signal.aborted) report(new Error('the stream ended; reconnecting'));
      } catch (err) {
        if (abort.signal.aborted) break;
        if ((err as { fatal?: boolean }).fatal) throw err;
        wait = (err as { retryAfterMs?: number }).retryAfterMs ?? retryMs;
        report(err);
      }
      await sleep(wait, abort.signal);
    }
  })();
  // A caller that never awaits `done` still sees a refusal through onError.
  done.catch(report);
  return {
    get lastEventId() {
      return lastEventId;
    },
    close: () => abort.abort(),
    done,
  };
}
