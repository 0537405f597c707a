import type { Selectable } from 'kysely';
import type { ItemsTable, MeetingsTable, PeopleTable, SeriesTable } from '../db/schema.js';
import type { NoteRow } from '../db/notes.repository.js';

/** The one place rows become API objects: column names never reach a response. */

export type PersonRow = Selectable<PeopleTable>;
export type SeriesRow = Selectable<SeriesTable>;
export type MeetingRow = Selectable<MeetingsTable>;
export type ItemRow = Selectable<ItemsTable>;

export interface Note {
  date: string;
  yesterday: string;
  today: string;
  impediments: string[];
  todayPriority: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

export function toNote(row: NoteRow): Note {
  return {
    date: row.date,
    yesterday: row.yesterday,
    today: row.today,
    impediments: row.impediments,
    todayPriority: row.today_priority,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    deletedAt: row.deleted_at,
  };
}

export function toPerson(row: PersonRow) {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    archived: row.archived_at !== null,
    archivedAt: row.archived_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function toSeries(row: SeriesRow) {
  return {
    id: row.id,
    title: row.title,
    cadence: row.cadence,
    weekday: row.weekday,
    monthDay: row.month_day,
    startTime: row.start_time,
    durationMinutes: row.duration_minutes,
    timezone: row.timezone,
    startDate: row.start_date,
    participantIds: row.participant_ids,
    template: row.template.map((i) => ({ kind: i.kind, text: i.text })),
    archived: row.archived_at !== null,
    archivedAt: row.archived_at,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export interface Meeting {
  id: string;
  seriesId: string;
  date: string | null;
  startsAt: string | null;
  status: string;
  sharedNotes: string;
  privateNotes?: string;
  revision: number;
  createdAt: string;
  updatedAt: string;
}

/** A meeting as the caller may see it: privateNotes only when `withPrivate` (browser sessions). */
export function toMeeting(row: MeetingRow, withPrivate: boolean): Meeting {
  const meeting: Meeting = {
    id: row.id,
    seriesId: row.series_id,
    date: row.date,
    startsAt: row.starts_at,
    status: row.status,
    sharedNotes: row.shared_notes,
    revision: row.revision,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
  if (withPrivate) meeting.privateNotes = row.private_notes;
  return meeting;
}

export type Item = ReturnType<typeof toItem>;

export function toItem(row: ItemRow) {
  return {
    id: row.id,
    meetingId: row.meeting_id,
    parentId: row.parent_id,
    kind: row.kind,
    text: row.text,
    notes: row.notes,
    starred: row.starred,
    owner: row.owner,
    dueDate: row.due_date,
    completedAt: row.completed_at,
    status: row.status,
    carryCount: row.carry_count,
    provenance:
      row.from_item_id !== null && row.from_meeting_id !== null && row.carried_at !== null
        ? { fromItemId: row.from_item_id, fromMeetingId: row.from_meeting_id, carriedAt: row.carried_at }
        : null,
    position: row.position,
    linkedTask:
      row.linked_task_id !== null ? { id: row.linked_task_id, completedAt: row.linked_task_completed_at } : null,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** Items in reading order: top-level by position, each followed by its nested items by position. */
export function inReadingOrder(rows: ItemRow[]): Item[] {
  const children = new Map<string, ItemRow[]>();
  const top: ItemRow[] = [];
  for (const row of rows) {
    if (row.parent_id === null) top.push(row);
    else {
      const siblings = children.get(row.parent_id);
      if (siblings) siblings.push(row);
      else children.set(row.parent_id, [row]);
    }
  }
  const byPosition = (a: ItemRow, b: ItemRow) => a.position - b.position;
  const ordered: Item[] = [];
  for (const row of top.sort(byPosition)) {
    ordered.push(toItem(row));
    for (const child of children.get(row.id)?.sort(byPosition) ?? []) ordered.push(toItem(child));
  }
  return ordered;
}
