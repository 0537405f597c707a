import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { AnyDb } from '../identity/repository.js';

/** A watch's lease: a process that dies without ending its watches stops their notices this long after. */
const LEASE_MINUTES = 60;
/** How often a live process renews its watches (and re-makes any the database lost). */
export const WATCH_RENEW_MS = 20 * 60_000;
/** The longest pause between two looks at the transactions a new watch waits out. */
const SETTLE_MAX_WAIT_MS = 1000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The keys (accounts, workspaces) this process streams, as rows of `stream_watches`: while a key
 * has a live row, its writes are announced (`stream_announce`, see ./migrations.ts); otherwise a
 * write sends no notice and so does not queue behind every other notifying commit.
 *
 * A write that looked for the row before it was committed sends no notice. Each such write already
 * held its transaction id when it looked, so the transactions still in progress just after the
 * row's commit (`pg_current_snapshot()`'s list, less those of other databases) cover them all:
 * {@link watch} resolves once the row is committed, and `settled(key)` is called when the last of
 * those transactions has ended, for the streams of the key to read once more.
 */
export class StreamWatches {
  /** Each watched key's registration: its row's holder id, and the write of that row. */
  private readonly held = new Map<string, { holder: string; registered: Promise<void> }>();

  constructor(
    private readonly db: AnyDb,
    private readonly settled: (key: string) => void,
  ) {}

  /** Resolves when writes of `key` are announced (at once when this process already streams it). */
  watch(key: string): Promise<void> {
    const current = this.held.get(key);
    if (current) return current.registered;
    const holder = randomUUID();
    const registered = this.register([{ key, holder }], 'wait out');
    const entry = { holder, registered };
    this.held.set(key, entry);
    registered.catch(() => {
      if (this.held.get(key) === entry) this.held.delete(key);
    });
    return registered;
  }

  /** The last stream of `key` in this process ended: its row goes (best effort; the lease ends it anyway). */
  unwatch(key: string): void {
    const entry = this.held.get(key);
    if (!entry) return;
    this.held.delete(key);
    void entry.registered.then(() => this.drop([entry.holder])).catch(() => {});
  }

  /**
   * Extends every watch of this process. `afterOutage` (the database was out of reach, maybe
   * longer than a lease): the rows are written again, and once the transactions of that moment
   * have ended every streamed key's streams read once, for writes that went unannounced meanwhile.
   */
  renew(afterOutage: boolean): Promise<void> {
    return this.register(
      [...this.held].map(([key, { holder }]) => ({ key, holder })),
      afterOutage ? 'wake' : 'extend',
    );
  }

  /** Ends this process's watches (shutdown). */
  async close(): Promise<void> {
    const holders = [...this.held.values()].map((e) => e.holder);
    this.held.clear();
    await this.drop(holders).catch(() => {});
  }

  /**
   * Writes (or extends) the rows, then: `extend`, nothing more; `wait out`, the writes that looked
   * before the rows committed (if any transaction was then in progress); `wake`, the same, and the
   * streams read once even when none was.
   */
  private async register(
    watches: Array<{ key: string; holder: string }>,
    then: 'extend' | 'wait out' | 'wake',
  ): Promise<void> {
    if (watches.length === 0) return;
    const holders = watches.map((w) => w.holder);
    // The rows of processes that died holding these keys go first, and any such row a day past
    // its lease (a key nobody streamed since); not this process's own, which the upsert extends
    // (one statement may not both delete and update a row).
    await sql`
      with expired as (
        delete from stream_watches
        where expires_at < now() and holder <> all(${holders}::uuid[])
          and (key = any(${watches.map((w) => w.key)}::uuid[]) or expires_at < now() - interval '1 day')
      )
      insert into stream_watches (key, holder, expires_at)
      select w.key, w.holder, now() + make_interval(mins => ${LEASE_MINUTES})
      from unnest(${watches.map((w) => w.key)}::uuid[], ${holders}::uuid[]) as w(key, holder)
      on conflict (key, holder) do update set expires_at = excluded.expires_at`.execute(this.db);
    if (then === 'extend') return;
    // A statement of its own, so its snapshot is taken after the rows' commit. The transactions
    // of the server's other databases cannot write these tables: a long one there (another
    // deployment's, a test's) once held a stream's unannounced write back for seconds. A
    // backend's `backend_xid` is its xid's low 32 bits; one not known to be elsewhere is waited out.
    const { rows } = await sql<{ xid: string }>`
      select x.id::text as xid from pg_snapshot_xip(pg_current_snapshot()) as x(id)
      where not exists (
        select 1 from pg_stat_activity a
        where a.datname <> current_database() and a.backend_xid::text = (x.id::text::bigint % 4294967296)::text)`.execute(
      this.db,
    );
    if (rows.length === 0 && then === 'wait out') return;
    void this.settle(
      watches.map((w) => w.key),
      rows.map((r) => r.xid),
    );
  }

  /** Waits until none of `xids` is in progress, then tells the streams of `keys` to read. */
  private async settle(keys: string[], xids: string[]): Promise<void> {
    let wait = 5;
    for (;;) {
      await sleep(wait);
      if (!keys.some((key) => this.held.has(key))) return;
      const open = await sql<{ n: number }>`
        select count(*)::int as n from unnest(${xids}::xid8[]) as x(id) where pg_xact_status(x.id) = 'in progress'`
        .execute(this.db)
        .then(({ rows }) => rows[0]!.n)
        .catch(() => 1);
      if (open === 0) break;
      wait = Math.min(wait * 2, SETTLE_MAX_WAIT_MS);
    }
    for (const key of keys) if (this.held.has(key)) this.settled(key);
  }

  private async drop(holders: string[]): Promise<void> {
    if (holders.length === 0) return;
    await sql`delete from stream_watches where holder = any(${holders}::uuid[])`.execute(this.db);
  }
}
