import { randomUUID } from 'node:crypto';
import type { Request, RequestHandler, Response } from 'express';
import type { Redis } from 'ioredis';
import pg from 'pg';
import type { Logger } from 'pino';
import { AppError } from '@app/http-errors';
import { liveCredentialIds, type AnyDb } from '../identity/repository.js';
import { streamChannel } from './migrations.js';
import { createStreamSlots, type StreamSlots } from './slots.js';
import { StreamWatches, WATCH_RENEW_MS } from './watches.js';

/** One page of a feed, as a stream sends it. */
export interface StreamPage {
  /** The changes, each exactly as the feed's JSON answer carries it. */
  changes: readonly unknown[];
  /** The cursor just after `changes[k]`: the event's id. */
  cursorAfter(k: number): string;
  nextCursor: string;
  hasMore: boolean;
  /**
   * Feeds with a horizon (tasks, meetings): when the page ends its window, every change notified
   * with a position at or below this is in it or an earlier page. Undefined: a change is readable
   * as soon as its notification arrives (clipboard, whose writers commit in order).
   */
  reached?: bigint;
}

/** The caller's feed, opened once per stream. */
interface FeedReader {
  /** What the feed's notifications name (the account, or the tasks workspace). */
  key: string;
  /** A page after `cursor` (undefined: from the initial sync); throws the feed's 400/410 for a bad cursor. */
  read(cursor: string | undefined, limit: number): Promise<StreamPage>;
  /**
   * The readers of a key with the same `shares` give the same page after the same cursor (for
   * any limit: a longer page is as good): the hub may read it once for them all (see
   * {@link StreamHub.readOnce}). Undefined: this reader's pages are its own.
   */
  shares?: string;
  /** The pages after each of `cursors` (in their order), from one read: such readers at different places. */
  readMany?(cursors: string[], limit: number): Promise<StreamPage[]>;
  /**
   * An event that is no change of the feed (tasks' `reminder.fired`), by the reference its
   * announcement carries (see announceStreamEvent): its `event:` name and data, or undefined
   * when it is gone.
   */
  event?(ref: string): Promise<{ type: string; data: unknown } | undefined>;
  /**
   * The references of the events announced at or after `since`, oldest first: what a stream is
   * sent when the notifications that carry them may have been lost (the listener was down).
   */
  announcedSince?(since: Date): Promise<string[]>;
}

/** A service's feed as a stream: how to open it for a caller (its route has checked the scopes). */
export type StreamFeed = (req: Request) => FeedReader | Promise<FeedReader>;

export interface StreamHubOptions {
  service: string;
  databaseUrl: string;
  db: AnyDb;
  redis: Redis | null;
  redisPrefix: string;
  logger: Logger;
  /** The longest silence on a stream: a `: keepalive` comment goes out at least this often (15 s). */
  keepaliveMs: number;
  /** Open streams per account in this service, across replicas (10). */
  maxPerAccount: number;
  /** How often streams read their feed while the notification listener is down (1 s). */
  fallbackPollMs: number;
  /**
   * Feed reads of streams under way at once, at most (half the request pool): the rest wait their
   * turn in the hub, so the pool always has connections for the requests (see {@link StreamHub.read}).
   */
  maxReads: number;
}

/** Changes read per statement at most (the feeds' own limit). */
const PAGE = 500;
/** A stream's first page: few, since its changes' size is not known yet (a clipboard item holds up to 128 K characters). */
const FIRST_PAGE = 8;
/**
 * About how much a page of events weighs: later pages hold as many changes as fit, sized by the
 * previous page's largest, so a stream whose reader waits holds one such page (and the socket's
 * buffer) whatever the history.
 */
const PAGE_BYTES = 512 * 1024;
/** A slot's lease in Redis: a replica that dies frees its slots this long after. */
const SLOT_LEASE_MS = 30_000;
/** What a 429 asks the client to wait. */
const RETRY_AFTER_SECONDS = 5;
/** The reconnection delay an SSE client is told on shutdown. */
const SHUTDOWN_RETRY_MS = 1000;
/** A read that failed (Postgres restarting) is tried again this much later. */
const READ_RETRY_MS = 500;
/**
 * After the listener was lost, the events announced from this long before are read again: an
 * event's time is taken inside its transaction, a moment before the commit that notifies. A
 * stream remembers what it sent over at least twice this long, so none is sent twice.
 */
const ANNOUNCED_SLACK_MS = 2_000;
/**
 * The periodic work on every stream (keepalive comments, slot leases) is done a slice at a time,
 * spread over its period: at once, 10,000 streams' keepalives held the event loop 200 ms and their
 * leases 100 ms more, and every change waiting meanwhile came that much later. Leases are renewed
 * by account (a slice of the accounts each turn, see StreamSlots.refresh), not stream by stream:
 * two Redis commands an account instead of two a stream, whose thousands of pending commands a
 * second were most of what the 10,000 streams' process moved to its old generation.
 */
const SLICES = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** One open stream: its place in the feed, and what wakes it. */
class Stream {
  readonly slot = randomUUID();
  /** Which of the hub's slices the stream is in (see SLICES). */
  slice = 0;
  cursor: string | undefined;
  /** The highest position notified that the stream has not yet seen delivered. */
  private want = 0n;
  private reading = false;
  private again = false;
  /** Changes the next read asks for (see PAGE_BYTES). */
  limit = FIRST_PAGE;
  /** Since when the stream has waited for its reader to take what was written, with more to send. */
  waitingSince: number | undefined;
  /** Ends the wait for the reader (the connection closed, or the stream ended). */
  private stopWaiting: (() => void) | undefined;
  /** The response is gone or ending: nothing more is written. */
  closed = false;
  /** Out of the hub's lists, its slot released (when its response closed). */
  removed = false;
  expiry: NodeJS.Timeout | undefined;
  /** The announced events sent lately (see {@link push}) by reference: when, and whether as `missed`. */
  private readonly pushed = new Map<string, { at: number; missed: boolean }>();

  constructor(
    private readonly hub: StreamHub,
    readonly res: Response,
    readonly reader: FeedReader,
    readonly account: string,
    /** What revoking ends it: its key, session or OAuth grant, and an OAuth access token itself. */
    readonly credentials: readonly string[],
    start: string | undefined,
  ) {
    this.cursor = start;
  }

  /** A change may be readable (at `position`, when the notification said): read until it is delivered. */
  wake(position?: bigint): void {
    if (position !== undefined && position > this.want) this.want = position;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.pump();
  }

  /**
   * The first page (where a bad cursor is refused, before any header goes out), read once the
   * stream's key is `watched` (its writes announced). The stream counts as reading until
   * {@link opened}, so a notification meanwhile waits for the page to be sent.
   */
  async first(watched: Promise<void>): Promise<StreamPage | undefined> {
    this.reading = true;
    try {
      await watched;
      return await this.nextPage(false);
    } catch (err) {
      this.reading = false;
      throw err;
    }
  }

  /** Sends the first page, then carries on as any wake would. */
  async opened(page: StreamPage): Promise<void> {
    await this.send(page);
    this.reading = false;
    if (page.hasMore || this.again || (page.reached !== undefined && page.reached < this.want)) this.wake();
  }

  /**
   * Writes `page` event by event, each once the socket has taken the one before (write()'s answer),
   * and moves the stream after it; with more pages to come, resolves once the socket has taken it
   * all. An event is built only when it is written: what waits unsent is the socket's buffer and
   * this one page.
   */
  async send(page: StreamPage): Promise<void> {
    let largest = 0;
    for (let k = 0; k < page.changes.length; k++) {
      await this.writable();
      if (this.closed) return;
      const event = `id: ${page.cursorAfter(k)}\nevent: change\ndata: ${JSON.stringify(page.changes[k])}\n\n`;
      largest = Math.max(largest, event.length);
      this.res.write(event);
    }
    this.cursor = page.nextCursor;
    this.limit = Math.max(1, Math.min(PAGE, this.limit * 2, Math.floor(PAGE_BYTES / Math.max(largest, 1))));
    // The next page is read only once the socket has taken this one.
    if (page.hasMore) await this.writable();
  }

  /**
   * The next page, read in the hub's turn (`shared`: with the streams that ask for the same page
   * meanwhile, see FeedReader.shares); none when the stream closed while it waited for its turn.
   */
  private async nextPage(shared: boolean): Promise<StreamPage | undefined> {
    const { reader, cursor, limit } = this;
    const page =
      shared && reader.shares !== undefined && cursor !== undefined
        ? await this.hub.readOnce(this, cursor)
        : await this.hub.read(async () => (this.closed ? undefined : reader.read(cursor, limit)));
    return this.closed ? undefined : page;
  }

  /** Resolves once the socket has taken what was written (at once unless a write said to wait), or the stream is gone. */
  private writable(): Promise<void> {
    if (!this.res.writableNeedDrain || this.closed) return Promise.resolve();
    this.waitingSince = Date.now();
    return new Promise((resolve) => {
      const done = () => {
        this.res.off('drain', done).off('close', done);
        this.waitingSince = undefined;
        this.stopWaiting = undefined;
        resolve();
      };
      this.stopWaiting = done;
      this.res.on('drain', done).on('close', done);
    });
  }

  private async pump(): Promise<void> {
    this.reading = true;
    let wait = 5;
    try {
      do {
        this.again = false;
        const page = await this.nextPage(true);
        if (!page || this.closed) return;
        await this.send(page);
        if (page.hasMore) this.again = true;
        else if (page.reached !== undefined && page.reached < this.want) {
          // Committed, but an older transaction is still open somewhere: the horizon has not
          // passed it yet. Ask again shortly (this is the only reading a notified stream repeats).
          await sleep(wait);
          wait = Math.min(wait * 2, 100);
          this.again = true;
        }
      } while (this.again && !this.closed);
    } catch (err) {
      this.hub.readFailed(err);
      setTimeout(() => this.wake(), READ_RETRY_MS).unref();
    } finally {
      this.reading = false;
    }
  }

  /**
   * Sends the event `ref` names (see FeedReader.event), live: without `id:`, so a reconnect's
   * Last-Event-ID stays the last change's, and a stream not yet open or reconnecting misses it.
   * `missed`: read again after the listener was lost (see StreamHub.pushMissed), so not sent when
   * it was already; a notification is not sent when such a read has sent it (two events of one
   * reference that are notified are both sent: a task due again at another time).
   */
  async push(ref: string, missed = false): Promise<void> {
    const before = this.pushed.get(ref);
    if (!this.reader.event || this.closed || (before && (missed || before.missed))) return;
    // Forgotten once a read after a lost listener can no longer find it (see ANNOUNCED_SLACK_MS).
    const keepFrom = Math.min(this.hub.lostAt ?? Infinity, Date.now()) - 2 * ANNOUNCED_SLACK_MS;
    for (const [sent, { at }] of this.pushed) if (at < keepFrom) this.pushed.delete(sent);
    this.pushed.set(ref, { at: Date.now(), missed });
    try {
      const event = await this.reader.event(ref);
      if (event) this.write(`event: ${event.type}\ndata: ${JSON.stringify(event.data)}\n\n`);
    } catch (err) {
      this.pushed.delete(ref);
      this.hub.readFailed(err, 'a stream could not read an announced event');
    }
  }

  /** A comment between events; none before the stream's headers (its first read may span a keepalive tick). */
  write(text: string): void {
    if (!this.closed && this.res.headersSent) this.res.write(text);
  }

  /**
   * Ends the stream (`retry:` first when given). One whose reader has not taken what was written
   * is cut off instead: an ended response would hold its unsent bytes (and its slot) for as long
   * as the reader does not read.
   */
  end(retryMs?: number): void {
    if (this.closed) return;
    this.closed = true;
    if (this.res.writableLength > 0) this.res.destroy();
    else {
      if (retryMs !== undefined) this.res.write(`retry: ${retryMs}\n\n`);
      this.res.end();
    }
    this.stopWaiting?.();
  }
}

/**
 * The live change streams of one service process (Server-Sent Events).
 *
 * Waking: one Postgres connection per process LISTENs on the service's channel; the feed's
 * triggers announce each committing write of a streamed key (one this or another process
 * watches, see ./watches.ts) as `c:<key>:<position>` and each revoked credential as `r:<id>`,
 * and the hub wakes only the streams of that key (or ends that credential's). An idle
 * stream costs no query. While the listener is down (Postgres restarting, connection lost), every
 * stream reads its feed each `fallbackPollMs` and the credentials are checked in one query, until
 * the listener is back (then each stream reads once, for what it may have missed). The events
 * announced meanwhile (tasks' `reminder.fired`), which travel only as notifications, are read
 * again from when the listener was lost, at each of those reads, until one after it is back.
 */
export class StreamHub {
  private readonly streams = new Set<Stream>();
  /** The streams again, in SLICES sets of about equal size. */
  private readonly slices = Array.from({ length: SLICES }, () => new Set<Stream>());
  private nextSlice = 0;
  private readonly byKey = new Map<string, Set<Stream>>();
  private readonly byCredential = new Map<string, Set<Stream>>();
  private readonly slots: StreamSlots;
  private readonly watches: StreamWatches;
  private listener: pg.Client | undefined;
  private listening = false;
  private connecting = false;
  private closing = false;
  private reconnectMs = 100;
  /** When the listener was lost, until a read of what was announced since has succeeded with it back. */
  lostAt: number | undefined;
  private timers: NodeJS.Timeout[] = [];
  private fallback: NodeJS.Timeout | undefined;
  private lastReadWarning = 0;
  /** Stream reads under way, and the turns of those waiting (see {@link read}). */
  private readsRunning = 0;
  private readonly readTurns: Array<() => void> = [];
  /** Shared reads not yet begun, by what they read, and the streams that asked (see {@link readOnce}). */
  private readonly unbegun = new Map<string, { pages: Promise<Map<string, StreamPage>>; streams: Stream[] }>();

  constructor(private readonly o: StreamHubOptions) {
    this.slots = createStreamSlots({
      redis: o.redis,
      prefix: o.redisPrefix,
      max: o.maxPerAccount,
      leaseMs: SLOT_LEASE_MS,
      logger: o.logger,
    });
    this.watches = new StreamWatches(o.db, (key) => {
      for (const stream of this.byKey.get(key) ?? []) stream.wake();
    });
  }

  /** Open streams in this process. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * The route of a stream over `feed`: 429 past the account's open streams, the feed's 400/410
   * for a bad start, then `text/event-stream` with the backlog and the live changes.
   */
  route(feed: StreamFeed): RequestHandler {
    return async (req, res) => {
      const caller = req.caller!;
      const start = typeof req.query.cursor === 'string' ? req.query.cursor : req.get('last-event-id') || undefined;
      const reader = await feed(req);
      const credentials = caller.oauth ? [caller.credentialId, caller.oauth.tokenId] : [caller.credentialId];
      const stream = new Stream(this, res, reader, caller.accountId, credentials, start);
      if (!(await this.slots.take(stream.account, stream.slot))) {
        throw new AppError(
          429,
          'too_many_streams',
          `At most ${this.o.maxPerAccount} streams may be open per account; close one or retry later`,
          {
            headers: { 'Retry-After': String(RETRY_AFTER_SECONDS) },
          },
        );
      }
      // A client that left before the slot was taken: its 'close' has come and gone, and nothing
      // would release the slot or drop the stream.
      if (res.closed) {
        this.slots.release(stream.account, stream.slot);
        return;
      }
      // Listed (and listening) before the first read, so a change committed meanwhile wakes it.
      this.add(stream);
      res.on('close', () => this.remove(stream));
      this.ensureListener();
      let first: StreamPage | undefined;
      try {
        first = await stream.first(this.watches.watch(stream.reader.key));
      } catch (err) {
        this.remove(stream);
        throw err;
      }
      if (!first || stream.closed) return;
      res.writeHead(200, {
        'Content-Type': 'text/event-stream; charset=utf-8',
        'Cache-Control': 'no-cache, no-transform',
        'X-Accel-Buffering': 'no',
      });
      if (caller.oauth) {
        stream.expiry = setTimeout(() => stream.end(), Math.max(0, caller.oauth.expiresAt * 1000 - Date.now()));
        stream.expiry.unref();
      }
      // A comment first, so the headers and the open stream reach the client before any change.
      res.write(': stream open\n\n');
      releaseRequestState(req, res);
      await stream.opened(first);
    };
  }

  /** Ends every stream with `retry:` (clients reconnect, to another replica) and stops listening. */
  async close(): Promise<void> {
    this.closing = true;
    for (const stream of this.streams) stream.end(SHUTDOWN_RETRY_MS);
    for (const timer of this.timers) clearInterval(timer);
    this.stopFallback();
    const listener = this.listener;
    this.listener = undefined;
    await Promise.all([listener?.end().catch(() => {}), this.watches.close()]);
  }

  /**
   * Runs a stream's read of its feed once fewer than `maxReads` are under way, in the order the
   * streams asked. Every open stream of an account reads on each of its changes: with 10,000
   * streams, 100 writes a second were 500 reads a second, and unbounded they queued in the request
   * pool ahead of the writes (1,000 and more waiting), whose wait for a connection then ran past
   * its timeout: writes answered 503, reads failed and were tried again on top. A stream waiting
   * its turn counts as reading, so its further wakes make one read after it, not more.
   */
  async read<T>(read: () => Promise<T>): Promise<T> {
    if (this.readsRunning < this.o.maxReads) this.readsRunning += 1;
    else await new Promise<void>((resolve) => this.readTurns.push(resolve));
    try {
      return await read();
    } finally {
      // The turn passes to the next waiting read, or is given back.
      const next = this.readTurns.shift();
      if (next) next();
      else this.readsRunning -= 1;
    }
  }

  /**
   * {@link read}, once for the streams of a key with the same FeedReader.shares that ask before it
   * begins: each after its `cursor`. Each change wakes every stream of its account, and each read
   * the same rows: with 10,000 streams, five per account, five reads of one change. Readers with
   * `readMany` share a read from different cursors, the others only from the same one. A read once
   * begun is not joined: it may have been taken before the change that woke the later stream
   * committed. Not read at all when every stream that asked closed meanwhile.
   */
  readOnce(stream: Stream, cursor: string): Promise<StreamPage | undefined> {
    const { reader } = stream;
    const id = `${reader.key}\n${reader.shares}${reader.readMany ? '' : `\n${cursor}`}`;
    let asked = this.unbegun.get(id);
    if (!asked) {
      const streams: Stream[] = [];
      const pages = this.read(async () => {
        // Begins once the notification being handled has woken every stream, so they join it.
        await Promise.resolve();
        this.unbegun.delete(id);
        const open = streams.filter((s) => !s.closed);
        const cursors = [...new Set(open.map((s) => s.cursor!))];
        const limit = Math.max(...open.map((s) => s.limit));
        const read =
          cursors.length <= 1
            ? await Promise.all(cursors.map((c) => reader.read(c, limit)))
            : await reader.readMany!(cursors, limit);
        return new Map(cursors.map((c, k) => [c, read[k]!]));
      });
      asked = { pages, streams };
      this.unbegun.set(id, asked);
    }
    asked.streams.push(stream);
    return asked.pages.then((pages) => pages.get(cursor));
  }

  /** A read (or a watch's renewal) failed, Postgres down: one warning a minute; it is tried again. */
  readFailed(err: unknown, what = 'a stream could not read its feed; retrying'): void {
    if (Date.now() - this.lastReadWarning < 60_000) return;
    this.lastReadWarning = Date.now();
    this.o.logger.warn({ err: err instanceof Error ? err.message : String(err) }, what);
  }

  private add(stream: Stream): void {
    if (this.streams.size === 0) this.startTimers();
    this.streams.add(stream);
    stream.slice = this.nextSlice++ % SLICES;
    this.slices[stream.slice]!.add(stream);
    addTo(this.byKey, stream.reader.key, stream);
    for (const id of stream.credentials) addTo(this.byCredential, id, stream);
  }

  private remove(stream: Stream): void {
    if (stream.removed) return;
    stream.removed = true;
    stream.closed = true;
    clearTimeout(stream.expiry);
    this.streams.delete(stream);
    this.slices[stream.slice]!.delete(stream);
    if (removeFrom(this.byKey, stream.reader.key, stream)) this.watches.unwatch(stream.reader.key);
    for (const id of stream.credentials) removeFrom(this.byCredential, id, stream);
    this.slots.release(stream.account, stream.slot);
    if (this.streams.size === 0) {
      for (const timer of this.timers) clearInterval(timer);
      this.timers = [];
    }
  }

  /** Keepalive comments and slot leases, each a slice at a time (see SLICES); the watches' renewal. */
  private startTimers(): void {
    // A stream that has waited since its slice's previous turn for its reader to take what was
    // written, with more to send, has a reader further behind than what may wait unsent: it ends,
    // and the client resumes with Last-Event-ID. A reader that reads at all drains well within that.
    const lastTurn = new Array<number>(SLICES).fill(Date.now());
    const keepalive = this.everySlice(this.o.keepaliveMs, (slice, k) => {
      const since = lastTurn[k]!;
      lastTurn[k] = Date.now();
      for (const stream of slice) {
        if (stream.waitingSince !== undefined && stream.waitingSince <= since) stream.end();
        else stream.write(': keepalive\n\n');
      }
    });
    const leases = this.everySlice(SLOT_LEASE_MS / 3, (_, k) => this.slots.refresh(k, SLICES));
    const watches = setInterval(() => this.renewWatches(false), WATCH_RENEW_MS);
    watches.unref();
    this.timers = [keepalive, leases, watches];
  }

  /** Calls `visit` with each slice in turn, every slice once per `periodMs`. */
  private everySlice(periodMs: number, visit: (slice: ReadonlySet<Stream>, k: number) => void): NodeJS.Timeout {
    let k = 0;
    const timer = setInterval(() => {
      visit(this.slices[k]!, k);
      k = (k + 1) % SLICES;
    }, periodMs / SLICES);
    timer.unref();
    return timer;
  }

  private onNotification(payload: string | undefined): void {
    if (!payload) return;
    if (payload.startsWith('r:')) {
      for (const stream of this.byCredential.get(payload.slice(2)) ?? []) stream.end();
      return;
    }
    if (payload.startsWith('e:')) {
      // e:<key>:<ref>
      const split = payload.indexOf(':', 2);
      if (split < 0) return;
      for (const stream of this.byKey.get(payload.slice(2, split)) ?? []) void stream.push(payload.slice(split + 1));
      return;
    }
    // c:<key>:<position>
    const split = payload.lastIndexOf(':');
    const key = payload.slice(2, split);
    const position = payload.slice(split + 1);
    const streams = this.byKey.get(key);
    if (!streams || !/^\d{1,20}$/.test(position)) return;
    const at = BigInt(position);
    for (const stream of streams) stream.wake(at);
  }

  private ensureListener(): void {
    if (this.listening || this.connecting || this.closing) return;
    this.connecting = true;
    this.startFallback();
    const client = new pg.Client({
      connectionString: this.o.databaseUrl,
      application_name: `${this.o.service}-streams`,
      keepAlive: true,
      connectionTimeoutMillis: 2000,
    });
    let lost = false;
    const onLost = (err?: Error) => {
      if (lost) return;
      lost = true;
      this.listening = false;
      this.connecting = false;
      if (this.listener === client) this.listener = undefined;
      client.end().catch(() => {});
      if (this.closing) return;
      this.lostAt ??= Date.now();
      this.o.logger.warn(
        { err: err?.message },
        'stream notifications lost: streams poll their feeds until the listener is back',
      );
      this.startFallback();
      const delay = this.reconnectMs;
      this.reconnectMs = Math.min(this.reconnectMs * 2, 2000);
      setTimeout(() => this.ensureListener(), delay).unref();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', (n) => this.onNotification(n.payload));
    client
      .connect()
      .then(() => client.query(`listen ${streamChannel(this.o.service)}`))
      .then(() => {
        if (lost) return;
        if (this.closing) {
          void client.end();
          return;
        }
        this.listener = client;
        this.listening = true;
        this.connecting = false;
        this.reconnectMs = 100;
        this.stopFallback();
        // Whatever was announced while nobody listened: one read per stream, one credential check;
        // and the watches again, in case their leases ran out meanwhile.
        this.catchUp();
        this.renewWatches(true);
      })
      .catch((err: unknown) => onLost(err instanceof Error ? err : new Error(String(err))));
  }

  private startFallback(): void {
    if (this.fallback || this.closing) return;
    this.fallback = setInterval(() => this.catchUp(), this.o.fallbackPollMs);
    this.fallback.unref();
  }

  private stopFallback(): void {
    clearInterval(this.fallback);
    this.fallback = undefined;
  }

  private renewWatches(afterOutage: boolean): void {
    this.watches
      .renew(afterOutage)
      .catch((err: unknown) =>
        this.readFailed(err, 'the stream watches could not be renewed; trying again at the next renewal or reconnect'),
      );
  }

  /** Every stream reads its feed once, and streams of credentials revoked meanwhile end. */
  private catchUp(): void {
    if (this.streams.size === 0) {
      // No stream missed anything.
      if (this.listening) this.lostAt = undefined;
      return;
    }
    for (const stream of this.streams) stream.wake();
    this.pushMissed();
    const ids = [...this.byCredential.keys()];
    liveCredentialIds(this.o.db, ids)
      .then((live) => {
        for (const id of ids) if (!live.has(id)) for (const stream of this.byCredential.get(id) ?? []) stream.end();
      })
      .catch(() => {});
  }

  /**
   * While the listener is lost (and once it is back): each key's streams are sent the events
   * announced since a little before it was lost (read once per key), those they have not sent;
   * once that succeeded for every key with the listener back, {@link lostAt} is cleared.
   */
  private pushMissed(): void {
    const lostAt = this.lostAt;
    if (lostAt === undefined) return;
    const back = this.listening;
    const since = new Date(lostAt - ANNOUNCED_SLACK_MS);
    const reads = [...this.byKey].map(async ([key, streams]) => {
      const reader = streams.values().next().value?.reader;
      if (!reader?.announcedSince) return true;
      try {
        const refs = await reader.announcedSince(since);
        await Promise.all(
          [...(this.byKey.get(key) ?? [])].map(async (stream) => {
            for (const ref of refs) await stream.push(ref, true);
          }),
        );
        return true;
      } catch (err) {
        this.readFailed(err, 'a stream could not read the events announced while the listener was down');
        return false;
      }
    });
    void Promise.all(reads).then((done) => {
      if (back && done.every(Boolean) && this.lostAt === lostAt) this.lostAt = undefined;
    });
  }
}

/**
 * What an open stream's request holds on to that nothing reads any more, let go (with 10,000
 * open streams, about 5 KB each: measured with heap snapshots of a meetings replica):
 * - Node keeps the response's header block (`_header`, in every Node line), for as long as the
 *   response lives: 1.1 KB of Helmet's and the stream's headers, and first about 5 KB of the string
 *   fragments it was built from. Once sent (`_headerSent`), the block only tells `headersSent`
 *   and the checks of setHeader and writeHead that it was: a one-character block tells them the same.
 * - Express keeps `req.next`, and through it every router's `next` closure and state: nothing
 *   calls it once the response has begun (Express passes a later error on by its own reference).
 * - express-rate-limit's `req.rateLimit` (its key, counts and a Date), read only by the headers.
 */
function releaseRequestState(req: Request, res: Response): void {
  const out = res as unknown as { _header?: unknown; _headerSent?: boolean };
  if (out._headerSent === true && typeof out._header === 'string') out._header = ' ';
  req.next = undefined;
  (req as { rateLimit?: unknown }).rateLimit = undefined;
}

function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  const set = map.get(key);
  if (set) set.add(value);
  else map.set(key, new Set([value]));
}

/** Takes `value` out of `key`'s set; true when that emptied the set. */
function removeFrom<K, V>(map: Map<K, Set<V>>, key: K, value: V): boolean {
  const set = map.get(key);
  if (!set?.delete(value) || set.size > 0) return false;
  map.delete(key);
  return true;
}

/** The app's stream hub (see {@link StreamHub}); the process closes it first on shutdown. */
export function createStreamHub(o: StreamHubOptions): StreamHub {
  return new StreamHub(o);
}
