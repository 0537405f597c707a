/** One block of a Server-Sent Events stream: its fields, or a comment line. */
interface StreamBlock {
  id?: string;
  event?: string;
  data?: string;
  retry?: string;
  comment?: string;
}

/** A change event: its id and its parsed data. */
interface ChangeEvent {
  id: string;
  change: { id: string } & Record<string, unknown>;
}

/**
 * A held event stream, as a test (or the bench) sees it: every block in arrival order, with when it
 * arrived, and whether the server has ended it. Never asserts by itself.
 */
export interface OpenedStream {
  status: number;
  headers: Headers;
  /** A non-200 answer's body (JSON when it is). */
  body?: unknown;
  blocks: Array<StreamBlock & { at: number }>;
  changes(): ChangeEvent[];
  /** The id of the last change event. */
  lastId(): string | undefined;
  /** Resolves once `done(this)` holds (checked on every block), rejects after `timeoutMs`. */
  until(done: (s: OpenedStream) => boolean, timeoutMs?: number): Promise<void>;
  /** Resolves when the server ends the stream (or the connection drops). */
  ended: Promise<number>;
  close(): void;
}

function parseBlock(text: string): StreamBlock[] {
  const fields: StreamBlock = {};
  const comments: StreamBlock[] = [];
  for (const line of text.split('\n')) {
    if (line.startsWith(':')) comments.push({ comment: line.slice(1).trim() });
    else {
      const colon = line.indexOf(':');
      const name = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
      if (name === 'id' || name === 'event' || name === 'data' || name === 'retry') fields[name] = value;
    }
  }
  return Object.keys(fields).length > 0 ? [...comments, fields] : comments;
}

/** Opens `url` as an event stream with `headers` (Authorization, Last-Event-ID, ...). */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<OpenedStream> {
  const abort = new AbortController();
  const res = await fetch(url, { headers: { Accept: 'text/event-stream', ...headers }, signal: abort.signal });
  const waiters = new Set<() => void>();
  const stream: OpenedStream = {
    status: res.status,
    headers: res.headers,
    blocks: [],
    changes: () => stream.blocks.filter((b) => b.event === 'change').map((b) => ({ id: b.id!, change: JSON.parse(b.data!) as ChangeEvent['change'] })),
    lastId: () => stream.changes().at(-1)?.id,
    until(done, timeoutMs = 5000) {
      if (done(stream)) return Promise.resolve();
      return new Promise((resolve, reject) => {
        const check = () => {
          if (!done(stream)) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`event stream: condition not met within ${timeoutMs} ms; blocks: ${JSON.stringify(stream.blocks.slice(-20))}`));
        }, timeoutMs);
        waiters.add(check);
      });
    },
    ended: Promise.resolve(0),
    close: () => abort.abort(),
  };
  if (res.status !== 200) {
    const text = await res.text();
    try {
      stream.body = JSON.parse(text) as unknown;
    } catch {
      stream.body = text;
    }
    return stream;
  }
  stream.ended = (async () => {
    const decoder = new TextDecoder();
    let buffer = '';
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        buffer += decoder.decode(chunk, { stream: true });
        let end;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const at = Date.now();
          for (const block of parseBlock(buffer.slice(0, end))) stream.blocks.push({ ...block, at });
          buffer = buffer.slice(end + 2);
        }
        for (const check of [...waiters]) check();
      }
    } catch {
      // Closed by us, or the connection dropped: ended either way.
    }
    for (const check of [...waiters]) check();
    return Date.now();
  })();
  return stream;
}
