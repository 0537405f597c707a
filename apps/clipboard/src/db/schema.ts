import type { ColumnType, Generated } from 'kysely';
import type { AuthDatabase } from '@app/auth/identity';

/** A timestamp the database fills in by default. */
type Stamp = ColumnType<string, string | undefined, string>;

export interface AccountStateTable {
  account_id: string;
  seq: Generated<number>;
  min_retained_seq: Generated<number>;
  non_favorites: Generated<number>;
  history_limit: Generated<number>;
  retention_days: Generated<number>;
  capture_enabled: Generated<boolean>;
  settings_updated_at: string | null;
  sensitive_ttl_seconds: Generated<number>;
  seal_salt: string | null;
}

export interface ItemsTable {
  id: string;
  account_id: string;
  type: string;
  content: string;
  source: string;
  favorite: Generated<boolean>;
  sensitive: Generated<boolean>;
  /** When the sweep deletes a sensitive item. */
  expires_at: string | null;
  key_id: string | null;
  dedupe_key: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

export interface SnippetsTable {
  id: string;
  account_id: string;
  name: string;
  content: string;
  keyword: string | null;
  created_at: Stamp;
  updated_at: Stamp;
}

interface ChangesTable {
  account_id: string;
  seq: number;
  entity: string;
  entity_id: string;
  op: string;
  changed_at: Stamp;
}

interface SyncReceiptsTable {
  account_id: string;
  client_change_id: string;
  status: string;
  seq: number | null;
  error: string | null;
  created_at: Stamp;
}

/** Every table of the clipboard schema. */
export interface Database extends AuthDatabase {
  account_state: AccountStateTable;
  items: ItemsTable;
  snippets: SnippetsTable;
  changes: ChangesTable;
  sync_receipts: SyncReceiptsTable;
}
