import type { StreamPage } from '@app/auth/streams';
import type { Kysely } from 'kysely';
import type { Database } from '../db/schema.js';
import type { ChangesPage } from './changes.service.js';
import { parseFilter } from './filter.js';
import { matchTasks } from './filter.match.js';
import type { Task } from './tasks.service.js';
import { taskOf } from './webhook-filter.js';

type Page = ChangesPage & StreamPage;
type StreamEvent = { type: string; data: unknown };

/**
 * `GET /api/v1/tasks/changes/stream?filter=`: the stream sends only the changes and events whose
 * task matches the expression, judged as each is read, its dates in the caller's zone then (as the
 * list's). A delete carries no task (`item: null`), so it is always sent: a client drops the id if
 * it holds it. What is left out is passed over, not held back: each sent change keeps its own
 * cursor as its `id:`, so a resume with Last-Event-ID reads on after the last one sent (and
 * judges again what it passed over). Unreadable text is the list's 400, before the stream opens.
 */
export function streamFilter(db: Kysely<Database>, text: string, zone: string) {
  parseFilter(text);
  const judge = (tasks: Task[]) => {
    const now = Date.now();
    return matchTasks(
      db,
      text,
      tasks.map((task) => ({ task, atMillis: now })),
      zone,
    );
  };
  return {
    async page(page: Page): Promise<Page> {
      const upserts = page.changes.flatMap((c, k) => (c.type === 'upsert' ? [{ k, task: c.item }] : []));
      const matched = await judge(upserts.map((u) => u.task));
      const out = new Set(upserts.filter((_u, i) => !matched[i]).map((u) => u.k));
      if (out.size === 0) return page;
      const kept = page.changes.flatMap((_c, k) => (out.has(k) ? [] : [k]));
      return { ...page, changes: kept.map((k) => page.changes[k]!), cursorAfter: (k) => page.cursorAfter(kept[k]!) };
    },
    /** `reminder.fired` `{ reminder, task }` by its task; `task.due` is the task. */
    async event(e: StreamEvent | undefined): Promise<StreamEvent | undefined> {
      if (!e) return undefined;
      return (await judge([taskOf(e.type, e.data)]))[0] ? e : undefined;
    },
  };
}
