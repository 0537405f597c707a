import { errors, type ErrorDetail } from '@app/http-errors';
import { dueAtMillis } from './due-time.js';
import { UNREADABLE_RULE, occurrences, parseRecurrence } from './recurrence.js';

/** The rule as sent and its next `count` occurrences after `from` (default now) on the wall clock of `zone`. */
export function previewRecurrence(
  query: { rule: string; from?: string; count: number },
  zone: string,
  nowMillis = Date.now(),
): { rule: string; occurrences: string[] } {
  const details: ErrorDetail[] = [];
  const rec = parseRecurrence(query.rule);
  if (!rec) details.push({ path: '/rule', message: UNREADABLE_RULE });
  if (query.from !== undefined && dueAtMillis(query.from) === undefined)
    details.push({ path: '/from', message: 'is not a real calendar date and time' });
  if (details.length > 0 || !rec) throw errors.validation(details);
  const from = query.from ?? new Date(nowMillis).toISOString();
  return { rule: query.rule, occurrences: occurrences(rec, from, zone, query.count) };
}
