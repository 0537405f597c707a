import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import ical from 'ical-generator';
import type { Database } from '../db/schema.js';
import * as repo from '../db/calendar.repository.js';
import { fail } from './errors.js';

/** The feed's window (DESIGN.md "Calendar feed"): meetings from 30 days back to 180 days ahead. */
const DAYS_BACK = 30;
const DAYS_AHEAD = 180;
/**
 * The UID's domain: `.invalid` is reserved (RFC 2606), so it claims nobody's name, and it stays
 * the same whatever host serves the feed: a calendar app never sees a meeting twice.
 */
const UID_DOMAIN = 'meetings.invalid';

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** The feed's path for a token; the token is 32 random bytes, base64url (43 characters). */
export const feedPath = (token: string) => `/api/calendar/${token}.ics`;

/** Makes the account's feed token, replacing the one it had; the token is returned once and stored hashed. */
export async function createFeed(db: Kysely<Database>, accountId: string): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await repo.putFeed(db, accountId, hashOf(token));
  return token;
}

/** Removes the account's feed (idempotent): its address answers 404 from now on. */
export async function removeFeed(db: Kysely<Database>, accountId: string): Promise<void> {
  await repo.deleteFeed(db, accountId);
}

/**
 * The iCalendar text (RFC 5545) of the feed `token` names, or 404 `not_found`: one VEVENT per
 * meeting in the window, UID `<meeting id>@meetings.invalid`, DTSTART in UTC, SUMMARY the series'
 * title, DESCRIPTION its talking points, URL the meeting in the API. DTSTAMP is the meeting's last
 * change, so the same data gives the same bytes (and ETag). Private notes are never read.
 */
export async function renderFeed(db: Kysely<Database>, token: string, origin: string): Promise<string> {
  const accountId = /^[A-Za-z0-9_-]{43}$/.test(token) ? await repo.findFeedAccount(db, hashOf(token)) : undefined;
  if (accountId === undefined) throw fail('not_found', 'Calendar feed not found');
  const meetings = await repo.listFeedMeetings(db, accountId, DAYS_BACK, DAYS_AHEAD);
  const points = await repo.listTalkingPoints(
    db,
    meetings.map((m) => m.id),
  );
  const pointsOf = new Map<string, string[]>();
  for (const p of points) pointsOf.set(p.meeting_id, [...(pointsOf.get(p.meeting_id) ?? []), `- ${p.text}`]);
  const calendar = ical({ name: 'Meetings', prodId: { company: 'app', product: 'meetings', language: 'EN' } });
  for (const m of meetings) {
    const start = new Date(m.starts_at!);
    calendar.createEvent({
      id: `${m.id}@${UID_DOMAIN}`,
      start,
      end: new Date(start.getTime() + m.duration_minutes * 60_000),
      stamp: new Date(m.updated_at),
      summary: m.title,
      description: (pointsOf.get(m.id) ?? []).join('\n'),
      url: `${origin}/api/meetings/${m.id}`,
    });
  }
  return calendar.toString();
}
