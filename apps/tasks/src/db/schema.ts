import type { ColumnType, Generated } from 'kysely';
import type { AuthDatabase } from '@app/auth';

/** A timestamp the database fills in. */
type CreatedAt = ColumnType<string, string | undefined, never>;

export interface WorkspacesTable {
  id: Generated<string>;
  owner_account_id: string;
  name: string;
  created_at: CreatedAt;
}

/** Every table of the tasks schema. */
export interface Database extends AuthDatabase {
  workspaces: WorkspacesTable;
}
