import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import type { Service } from '@app/devstack';

/**
 * One API key per account, written straight into the service's schema as its admin command
 * would (a random secret stored as SHA-256), with the scopes of `templateKeyId` (a key the admin
 * command made, so the scope list is the service's own). Returns `Authorization` values in the
 * accounts' order: spawning the admin command a thousand times would take minutes.
 */
export async function insertKeys(
  client: pg.ClientBase,
  service: Service,
  accountIds: string[],
  templateKeyId: string,
): Promise<string[]> {
  const keys = accountIds.map(() => `${service}_${randomBytes(32).toString('base64url')}`);
  await client.query(
    `insert into ${service}.api_keys (account_id, name, key_prefix, key_hash, scopes)
     select a, 'bench', left(k, $4::int), sha256(convert_to(k, 'UTF8')) /* the service's hashSecret */, (select scopes from ${service}.api_keys where id = $3)
     from unnest($1::uuid[], $2::text[]) as t(a, k)`,
    [accountIds, keys, templateKeyId, service.length + 7],
  );
  return keys.map((k) => `Bearer ${k}`);
}
