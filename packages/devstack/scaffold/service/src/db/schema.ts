import type { ColumnType, Generated } from 'kysely';
import type { AuthDatabase } from '@app/auth/identity';

/** A timestamp the database fills in on insert; written explicitly on update. */
type Stamp = ColumnType<string, string | undefined, string>;

/** A __resource__; a deleted one stays as a tombstone for the changes feed. */
export interface __Resource__Table {
  id: Generated<string>;
  account_id: string;
  title: string;
  url: string | null;
  created_at: Stamp;
  updated_at: Stamp;
  deleted_at: string | null;
  /** The writing transaction's id (see the migration): the feed's order. */
  change_xid: Generated<string>;
}

export interface Database extends AuthDatabase {
  __name__: __Resource__Table;
}
