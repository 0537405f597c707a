import { AdminError } from '../identity/admin.js';
import type { AnyDb } from '../database/database.js';
import type { SecretKeys } from './secret-box.js';
import { resealSecrets } from './stored-secrets.js';

/**
 * `webhooks reencrypt`: seals every subscription's signing secrets under WEBHOOK_SECRET_KEY (those
 * under a key of WEBHOOK_SECRET_KEYS_OLD, and any still in plain text) and prints the counts;
 * once `unreadable` is 0 the old keys can be dropped. `keys` is read only for a known command.
 */
export async function runWebhookCommand(
  db: AnyDb,
  argv: string[],
  keys: () => SecretKeys,
): Promise<Record<string, unknown>> {
  const [command, ...rest] = argv;
  if (command !== 'reencrypt')
    throw new AdminError(`unknown webhooks command ${command ?? '(none)'}; commands: webhooks reencrypt`);
  if (rest.length > 0) throw new AdminError(`webhooks reencrypt takes no arguments, got ${rest.join(' ')}`);
  const current = keys();
  const counts = await resealSecrets(db, current, 'all');
  return { reencrypt: { keyId: current.current.id, ...counts } };
}
