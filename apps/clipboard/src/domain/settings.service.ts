import {
  findState,
  updateSettings as writeSettings,
  withAccount,
  type AccountTx,
  type Db,
} from '../db/state.repository.js';
import { pruneHistory } from './items.service.js';
import { emit } from './events.js';
import { toSettings, type Settings } from './mappers.js';
import { TOMBSTONE_DAYS } from './limits.js';
import { fail } from './errors.js';
import type { Shape } from '@app/http-errors/validation';
import type { settingsPatchSchema } from './settings.schemas.js';

export type SettingsPatch = Shape<typeof settingsPatchSchema>;

/** The account's settings (defaults before the first change). */
export async function getSettings(db: Db, accountId: string): Promise<Settings> {
  return toSettings(await findState(db, accountId));
}

/** Applies a patch inside an account transaction and prunes what the new limits exclude. */
export async function applySettings(tx: AccountTx, patch: SettingsPatch): Promise<Settings> {
  const salt = tx.state.seal_salt;
  if (patch.sealSalt !== undefined && salt !== null && salt !== patch.sealSalt) {
    throw fail('seal_salt_set', 'sealSalt is set once: sealed items depend on it; read it with GET /api/settings');
  }
  const row = await writeSettings(tx, {
    ...(patch.historyLimit !== undefined && { history_limit: patch.historyLimit }),
    ...(patch.retentionDays !== undefined && { retention_days: patch.retentionDays }),
    ...(patch.captureEnabled !== undefined && { capture_enabled: patch.captureEnabled }),
    ...(patch.sensitiveItemTtlSeconds !== undefined && { sensitive_ttl_seconds: patch.sensitiveItemTtlSeconds }),
    ...(patch.sealSalt !== undefined && { seal_salt: patch.sealSalt }),
  });
  tx.record('settings', tx.accountId, 'upsert');
  await pruneHistory(tx);
  return toSettings(row);
}

/** Partial update; returns the full settings. */
export async function updateSettings(db: Db, accountId: string, patch: SettingsPatch): Promise<Settings> {
  return withAccount(db, accountId, TOMBSTONE_DAYS, async (tx) => {
    const before = toSettings(tx.state);
    return emit(tx.trx, accountId, 'settings.updated', await applySettings(tx, patch), before);
  });
}
