import type { CallOperation, McpPrompt, RestAnswer } from '@app/auth/mcp';
import type { Item, Meeting } from './domain/views.js';

/** What the meetings service tells an assistant on connecting, and appends to each tool. */
export const mcpInstructions =
  'Daily notes and 1:1 meetings. A series (a recurring 1:1 with people, WEEKLY, BIWEEKLY or MONTHLY) has dated meetings ' +
  'and one undated parking lot. Meetings hold items: TALKING_POINT, ACTION (with owner, dueDate, completedAt) and ' +
  'DECISION. Open talking points are carried forward (carryItem, carryMeeting) rather than copied. Updates of notes and ' +
  'meetings send the current revision as baseRevision; a 409 returns the server record to merge. Private notes are never ' +
  'available here. Use the prepare_one_on_one prompt before a 1:1.';

export const mcpToolNotes =
  "Dates are YYYY-MM-DD in the account's time zone (an X-Timezone header on the MCP connection overrides it); startsAt and " +
  'other instants are ISO 8601 in UTC. Ids are UUIDs. Errors come back as isError with { error: { code, message, details } }.';

/** getMeeting's answer: the meeting, its items and the previous completed meeting's outcome. */
interface MeetingDetail extends Meeting {
  items: Item[];
  previous: {
    date: string;
    sharedNotes: string;
    discussedPoints: Item[];
    decisions: Item[];
    openActions: Item[];
  } | null;
}

function ok<T>(answer: RestAnswer): T {
  if (answer.status >= 400)
    throw new Error(`the meetings service answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as T;
}

const describe = (i: Item) =>
  `- ${i.kind === 'ACTION' ? 'action' : i.kind === 'DECISION' ? 'decision' : 'talking point'}: ${i.text}` +
  `${i.owner ? ` (owner ${i.owner})` : ''}${i.dueDate ? ` (due ${i.dueDate})` : ''}${i.carryCount > 0 ? ` (carried ${i.carryCount}x)` : ''} (id ${i.id})`;
const list = (title: string, items: Item[]) => `${title}:\n${items.length ? items.map(describe).join('\n') : '- none'}`;

/** The next open meeting of a series, its items (carried ones marked), the parking lot and the last meeting's open actions. */
async function prepareOneOnOne(args: Record<string, string>, call: CallOperation): Promise<string> {
  const seriesId = args.seriesId!;
  const series = ok<{ items: Array<{ id: string; title: string }> }>(
    await call('listSeries', { limit: 500, includeArchived: '1' }),
  ).items.find((s) => s.id === seriesId);
  if (!series) throw new Error(`No series ${seriesId} in this account (listSeries gives the ids)`);
  const meetings = ok<{ items: Meeting[] }>(await call('listMeetings', { seriesId, limit: 500 })).items;
  const next = meetings.find((m) => m.date !== null && (m.status === 'SCHEDULED' || m.status === 'IN_PROGRESS'));
  const parkingLot = meetings.find((m) => m.date === null);
  const detail = next ? ok<MeetingDetail>(await call('getMeeting', { id: next.id })) : undefined;
  const parked = parkingLot
    ? ok<MeetingDetail>(await call('getMeeting', { id: parkingLot.id })).items.filter((i) => i.status === 'OPEN')
    : [];
  const open = (detail?.items ?? []).filter((i) => i.status === 'OPEN' && !(i.kind === 'ACTION' && i.completedAt));
  const previous = detail?.previous;
  return [
    `Prepare me for my next 1:1 of "${series.title}"${next ? ` on ${next.date}${next.startsAt ? ` (starts ${next.startsAt})` : ''}, meeting ${next.id}` : ' (no upcoming meeting is scheduled)'}.`,
    list(
      'Open talking points and actions on its agenda (carried ones say so)',
      open.filter((i) => i.kind !== 'DECISION'),
    ),
    list("Parked in the series' parking lot", parked),
    previous
      ? [
          `The last completed meeting was on ${previous.date}.`,
          list('Its actions still open', previous.openActions),
          list('Its decisions', previous.decisions),
          list('Talking points discussed there and not carried', previous.discussedPoints),
        ].join('\n\n')
      : 'There is no completed meeting of this series yet.',
    'Summarize what to raise, which open actions to follow up on, and suggest what to carry from the parking lot. Ask before changing anything.',
  ].join('\n\n');
}

export const mcpPrompts: McpPrompt[] = [
  {
    name: 'prepare_one_on_one',
    title: 'Prepare a 1:1',
    description:
      "For a series: the next meeting's open talking points and carried items, the parking lot, and the last meeting's open actions and decisions",
    arguments: [{ name: 'seriesId', description: 'The series (listSeries gives the ids)', required: true }],
    scopes: ['meetings:read'],
    build: prepareOneOnOne,
  },
];
