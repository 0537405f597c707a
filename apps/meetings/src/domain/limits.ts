import { fail } from './errors.js';

/** The spec's per-account limits; exceeding one is a 409 with the limit's own code. */
export const LIMITS = {
  notes: { max: 5000, code: 'note_limit_reached', what: 'live daily notes' },
  people: { max: 100, code: 'person_limit_reached', what: 'active people' },
  series: { max: 50, code: 'series_limit_reached', what: 'active series' },
  meetings: { max: 5000, code: 'meeting_limit_reached', what: 'meetings' },
  items: { max: 200, code: 'item_limit_reached', what: 'items in one meeting' },
} as const;

/** Throws the limit's 409 unless `current + adding` stays within it. */
export function assertWithinLimit(limit: keyof typeof LIMITS, current: number, adding = 1): void {
  const l = LIMITS[limit];
  if (current + adding > l.max) throw fail(l.code, `Limit reached: at most ${l.max} ${l.what}`);
}
