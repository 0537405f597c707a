import type { ColumnType, Generated } from 'kysely';
import type { AuthDatabase } from '@app/auth/identity';

/** A timestamp the database fills in on insert; written explicitly on update. */
type Stamp = ColumnType<string, string | undefined, string>;

export interface PeopleTable {
  id: Generated<string>;
  account_id: string;
  name: string;
  email: string | null;
  archived_at: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface SeriesTable {
  id: Generated<string>;
  account_id: string;
  title: string;
  cadence: string;
  weekday: number | null;
  month_day: number | null;
  start_time: string;
  duration_minutes: number;
  timezone: string;
  start_date: string;
  participant_ids: string[];
  /** jsonb: read as the array, written as its JSON text (pg would send a JS array as a Postgres array). */
  template: ColumnType<TemplateItem[], string | undefined, string>;
  archived_at: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

/** One item of a series' agenda template. */
export interface TemplateItem {
  kind: string;
  text: string;
}

export interface MeetingsTable {
  id: Generated<string>;
  account_id: string;
  series_id: string;
  date: string | null;
  starts_at: string | null;
  status: string;
  shared_notes: Generated<string>;
  private_notes: Generated<string>;
  revision: Generated<number>;
  created_at: Stamp;
  updated_at: Stamp;
  deleted_at: string | null;
}

export interface ItemsTable {
  id: Generated<string>;
  account_id: string;
  meeting_id: string;
  parent_id: string | null;
  kind: string;
  text: string;
  notes: Generated<string>;
  starred: Generated<boolean>;
  owner: string | null;
  due_date: string | null;
  completed_at: string | null;
  status: Generated<string>;
  carry_count: Generated<number>;
  from_item_id: string | null;
  from_meeting_id: string | null;
  carried_at: string | null;
  position: number;
  /** The task an action was sent to (DESIGN "Actions into tasks"), and its completion as last seen. */
  linked_task_id: string | null;
  linked_task_completed_at: string | null;
  task_send_round: Generated<number>;
  /** Its completion changed here and has yet to reach tasks (the task_sync job sends it). */
  task_sync_pending: Generated<boolean>;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface NotesTable {
  id: Generated<string>;
  account_id: string;
  date: string;
  yesterday: string;
  today: string;
  impediments: string[];
  today_priority: string;
  /** Every text field joined, kept by the repository, so one trigram index serves note search. */
  search_text: string;
  revision: number;
  created_at: Stamp;
  updated_at: Stamp;
  deleted_at: string | null;
}

interface CalendarFeedsTable {
  account_id: string;
  /** SHA-256 (hex) of the feed's secret token; the token itself is never stored. */
  token_hash: string;
  created_at: Stamp;
}

export interface TaskConnectionsTable {
  account_id: string;
  tasks_url: string;
  client_id: string;
  /** Sealed (sealValue): never the token itself. */
  access_token: string;
  /** Sealed (sealValue): never the token itself. */
  refresh_token: string;
  access_expires_at: string;
  /** Where the task_sync job is in tasks' changes feed (null: a full sync first). */
  changes_cursor: string | null;
  connected_at: Stamp;
  updated_at: Stamp;
}

export interface TaskConnectionStartsTable {
  state_hash: string;
  account_id: string;
  tasks_url: string;
  client_id: string;
  redirect_uri: string;
  verifier: string;
  created_at: Stamp;
}

/** Every table of the meetings schema. */
export interface Database extends AuthDatabase {
  task_connections: TaskConnectionsTable;
  task_connection_starts: TaskConnectionStartsTable;
  people: PeopleTable;
  series: SeriesTable;
  meetings: MeetingsTable;
  items: ItemsTable;
  notes: NotesTable;
  calendar_feeds: CalendarFeedsTable;
}
