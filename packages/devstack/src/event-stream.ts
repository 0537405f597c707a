import { once } from 'node:events';
import { request, type IncomingMessage } from 'node:http';
import { connect } from 'node:net';

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

/** A response's headers as fetch's `Headers`. */
function headersOf(res: IncomingMessage): Headers {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers))
    if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
  return headers;
}

/**
 * Opens `url` (http) as an event stream with `headers` (Authorization, Last-Event-ID, ...), on a
 * connection of its own. node:http, not fetch: the bench holds 10,000 of these on the machine it
 * measures, and fetch's web streams took a third of a core for their chunks (keepalives and events).
 */
export async function openEventStream(url: string, headers: Record<string, string> = {}): Promise<OpenedStream> {
  const req = request(url, { headers: { Accept: 'text/event-stream', ...headers }, agent: false });
  const res = await new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve).once('error', reject).end();
  });
  // A reset after the answer began ends the stream (below), never the process.
  req.on('error', () => {});
  res.on('error', () => {});
  const waiters = new Set<() => void>();
  // Each change block is parsed once, when first asked for: `until` checks on every chunk, and
  // parsing the whole history each time (250 clipboard changes of 120 KB) left a reader minutes behind.
  const changes: ChangeEvent[] = [];
  let parsed = 0;
  const stream: OpenedStream = {
    status: res.statusCode ?? 0,
    headers: headersOf(res),
    blocks: [],
    changes() {
      for (; parsed < stream.blocks.length; parsed++) {
        const block = stream.blocks[parsed]!;
        if (block.event === 'change')
          changes.push({ id: block.id!, change: JSON.parse(block.data!) as ChangeEvent['change'] });
      }
      return [...changes];
    },
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
          reject(
            new Error(
              `event stream: condition not met within ${timeoutMs} ms; blocks: ${JSON.stringify(stream.blocks.slice(-20))}`,
            ),
          );
        }, timeoutMs);
        waiters.add(check);
      });
    },
    ended: Promise.resolve(0),
    close: () => req.destroy(),
  };
  res.setEncoding('utf8');
  if (stream.status !== 200) {
    let text = '';
    for await (const chunk of res) text += chunk as string;
    try {
      stream.body = JSON.parse(text) as unknown;
    } catch {
      stream.body = text;
    }
    return stream;
  }
  let buffer = '';
  res.on('data', (chunk: string) => {
    buffer += chunk;
    let end;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const at = Date.now();
      for (const block of parseBlock(buffer.slice(0, end))) stream.blocks.push({ ...block, at });
      buffer = buffer.slice(end + 2);
    }
    for (const check of [...waiters]) check();
  });
  // Closed by us, or the connection dropped: ended either way.
  stream.ended = new Promise((resolve) =>
    res.once('close', () => {
      for (const check of [...waiters]) check();
      resolve(Date.now());
    }),
  );
  return stream;
}

/** What a {@link PausedStream} received once read: the answer's status, its blocks, and whether the server ended it. */
interface DrainedStream {
  status: number;
  /** The complete blocks of the body (a block cut off by the end is left out). */
  blocks: StreamBlock[];
  ended: boolean;
}

/**
 * A stream whose reader takes nothing until {@link PausedStream.drain}: a raw socket that is never
 * read (a stalled or hostile client), so the server's writes back up behind it.
 */
export interface PausedStream {
  /** Reads what arrived and what follows, until the server closes the connection (`ended`) or `timeoutMs` passes. */
  drain(timeoutMs: number): Promise<DrainedStream>;
  close(): void;
}

/** Opens `url` as an event stream on a socket that is not read (`Connection: close`, so an ended stream closes it). */
export async function openPausedStream(url: string, headers: Record<string, string> = {}): Promise<PausedStream> {
  const { hostname, port, pathname, search } = new URL(url);
  const socket = connect(Number(port), hostname);
  // A reset (the server destroying a connection whose reader lags) ends it all the same.
  socket.on('error', () => {});
  await once(socket, 'connect');
  const head = { Host: `${hostname}:${port}`, Accept: 'text/event-stream', Connection: 'close', ...headers };
  socket.write(
    `GET ${pathname}${search} HTTP/1.1\r\n${Object.entries(head)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('')}\r\n`,
  );
  return {
    async drain(timeoutMs) {
      const chunks: Buffer[] = [];
      const closed = once(socket, 'close').then(() => true);
      socket.on('data', (chunk: Buffer) => chunks.push(chunk));
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([
        closed,
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs))),
      ]);
      clearTimeout(timer);
      const raw = Buffer.concat(chunks);
      const split = raw.indexOf('\r\n\r\n');
      const body = dechunk(raw.subarray(split + 4)).toString('utf8');
      return {
        status: Number(/^HTTP\/1\.1 (\d{3})/.exec(raw.toString('latin1', 0, 20))?.[1] ?? 0),
        blocks: body.split('\n\n').slice(0, -1).flatMap(parseBlock),
        ended,
      };
    },
    close: () => socket.destroy(),
  };
}

/** A chunked body's bytes, as far as they came (a last chunk cut off is kept as far as it came). */
function dechunk(raw: Buffer): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  while (at < raw.length) {
    const eol = raw.indexOf('\r\n', at);
    const size = eol < 0 ? 0 : parseInt(raw.toString('latin1', at, eol), 16);
    if (!(size > 0)) break;
    parts.push(raw.subarray(eol + 2, eol + 2 + size));
    at = eol + 2 + size + 2;
  }
  return Buffer.concat(parts);
}
