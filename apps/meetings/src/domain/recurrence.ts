import { DateTime } from 'luxon';

/** The parts of a series that decide when it occurs. */
export interface RecurrenceRule {
  cadence: string;
  weekday: number | null;
  monthDay: number | null;
  startDate: string;
}

const day = (iso: string) => DateTime.fromISO(iso, { zone: 'UTC' });
const iso = (d: DateTime) => d.toISODate()!;

/**
 * The first `count` occurrence dates (YYYY-MM-DD, local to the series) on or after `from` and
 * never before the rule's startDate. WEEKLY/BIWEEKLY step from the first matching weekday on or
 * after startDate (so fortnights keep their phase); MONTHLY clamps monthDay to the month's
 * last day. Pure date arithmetic: the series' zone only matters for times (see {@link startsAtUtc}).
 */
export function occurrencesFrom(rule: RecurrenceRule, from: string, count: number): string[] {
  const start = from < rule.startDate ? rule.startDate : from;
  const out: string[] = [];
  if (rule.cadence === 'MONTHLY') {
    let month = day(start).startOf('month');
    while (out.length < count) {
      const candidate = iso(month.set({ day: Math.min(rule.monthDay!, month.daysInMonth!) }));
      if (candidate >= start) out.push(candidate);
      month = month.plus({ months: 1 });
    }
    return out;
  }
  const step = rule.cadence === 'BIWEEKLY' ? 14 : 7;
  const first = day(rule.startDate);
  // luxon numbers weekdays 1 (Monday) to 7 (Sunday); the API uses 0 (Sunday) to 6 (Saturday).
  let next = first.plus({ days: (rule.weekday! - (first.weekday % 7) + 7) % 7 });
  const startDay = day(start);
  if (startDay > next) next = next.plus({ days: Math.ceil(startDay.diff(next, 'days').days / step) * step });
  while (out.length < count) {
    out.push(iso(next));
    next = next.plus({ days: step });
  }
  return out;
}

/**
 * The UTC instant of a local date and HH:MM in an IANA zone. A wall time skipped by a
 * spring-forward change moves forward by the gap (luxon's rule); an ambiguous one (fall-back)
 * resolves to its second occurrence, in standard time.
 */
export function startsAtUtc(date: string, startTime: string, zone: string): string {
  return DateTime.fromISO(`${date}T${startTime}`, { zone }).toUTC().toISO()!;
}

/** Today's date in a zone. */
export function todayIn(zone: string): string {
  return DateTime.now().setZone(zone).toISODate()!;
}

/** The date after a date. */
export function nextDay(date: string): string {
  return iso(day(date).plus({ days: 1 }));
}

/** The date before a date. */
export function previousDay(date: string): string {
  return iso(day(date).minus({ days: 1 }));
}
