import { DateTime } from 'luxon';

/**
 * Milliseconds since the epoch of a due time matching the shared `DATE_TIME_PATTERN`
 * (@app/http-errors/validation, used by the request schema); undefined if it is not a real calendar date.
 */
export function dueAtMillis(text: string): number | undefined {
  const parsed = DateTime.fromISO(text, { setZone: true });
  return parsed.isValid ? parsed.toMillis() : undefined;
}

/** The start of tomorrow in `zone`, as an ISO instant: the line between `today` and `upcoming`. */
function startOfTomorrow(zone: string, now: DateTime = DateTime.now()): string {
  return now.setZone(zone).startOf('day').plus({ days: 1 }).toUTC().toISO()!;
}

/** {@link startOfTomorrow} for the current time (`nowMillis`, default now). */
export type StartOfTomorrow = (zone: string, nowMillis?: number) => string;

/**
 * {@link startOfTomorrow} for the current time, remembered per zone until that instant passes:
 * zone arithmetic is a measurable share of a list request, and the answer changes once a day.
 * Each app makes its own (createApp), so nothing is remembered at module level.
 */
export function tomorrowCache(maxZones = 1000): StartOfTomorrow {
  const byZone = new Map<string, { iso: string; millis: number; computedAt: number }>();
  return (zone, nowMillis = Date.now()) => {
    const hit = byZone.get(zone);
    if (hit && nowMillis < hit.millis && nowMillis >= hit.computedAt) return hit.iso;
    const iso = startOfTomorrow(zone, DateTime.fromMillis(nowMillis));
    if (byZone.size >= maxZones) byZone.clear();
    byZone.set(zone, { iso, millis: Date.parse(iso), computedAt: nowMillis });
    return iso;
  };
}
