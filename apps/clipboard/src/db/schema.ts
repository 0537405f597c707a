import type { AuthDatabase } from '@app/auth';

/** Every table of the clipboard schema. */
export interface Database extends AuthDatabase {
}
