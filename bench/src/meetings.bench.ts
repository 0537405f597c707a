import { expressFloors } from './floor.js';
import { inMeetingsSchema, seedMeetingsData } from './seed/meetings.js';
import { size } from './size.js';
import type { BenchContext, Scenario } from './types.js';

export interface MeetingsFixture {
  auth: Record<string, string>;
  /** A completed meeting in the middle of a series: its read carries a `previous` block. */
  meetingId: string;
  /** The key the admin command made (its scopes are copied to the bench's other keys). */
  keyId: string;
}

export async function seedMeetings(ctx: BenchContext): Promise<MeetingsFixture> {
  const { accountId } = await inMeetingsSchema(ctx.client, () => seedMeetingsData(ctx.client));
  const key = await ctx.admin('meetings', 'create-key', '--account', accountId, '--name', 'bench');
  const { rows } = await ctx.client.query<{ id: string }>(
    `select id from meetings.meetings where account_id = $1 and status = 'COMPLETED' order by series_id, date offset $2 limit 1`,
    [accountId, size(50, 1)],
  );
  return { auth: { authorization: `Bearer ${key.key}` }, meetingId: rows[0]!.id, keyId: key.id };
}

/** The meetings scenarios of the issue: one meeting with `previous`, search, actions. */
export async function meetingScenarios(_ctx: BenchContext, f: MeetingsFixture): Promise<Scenario[]> {
  return [
    {
      name: 'meetings get one (with previous)',
      service: 'meetings',
      request: { path: `/api/meetings/${f.meetingId}`, headers: f.auth },
      baseline: { replay: true },
      moreBaselines: expressFloors({ replay: true }),
    },
    {
      name: 'meetings search (q=roadmap)',
      service: 'meetings',
      request: { path: '/api/search?q=roadmap', headers: f.auth },
      baseline: { replay: true },
    },
    {
      name: 'meetings actions (open)',
      service: 'meetings',
      request: { path: '/api/actions?openOnly=1', headers: f.auth },
      baseline: { replay: true },
    },
  ];
}
