import type { AuthDatabase } from '@app/auth';

/** Every table of the meetings schema. */
export interface Database extends AuthDatabase {
}
