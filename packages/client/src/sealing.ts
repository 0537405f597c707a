import { scryptAsync } from '@noble/hashes/scrypt';
import type { Middleware } from 'openapi-fetch';
import type { ServiceClient, ServiceClientOptions } from './create.js';
import {
  createClipboardClient as createPlainClipboardClient,
  type ClipboardChange,
  type ClipboardPaths,
} from './services.generated.js';

/**
 * The key derivation: scrypt as OWASP's Password Storage Cheat Sheet recommends it (N = 2^17,
 * r = 8, p = 1: 128 MiB, about half a second once per client), over the passphrase and the
 * account's `sealSalt` (16 random bytes, set once by the first sealing client). It yields 64
 * bytes: an AES-256-GCM key and an HMAC-SHA-256 key (the `dedupeKey` and the `keyId`).
 */
export const SEAL_KDF = { N: 2 ** 17, r: 8, p: 1, dkLen: 64 } as const;

/** What a sealing clipboard client is told besides the connection. */
export interface ClipboardClientOptions extends ServiceClientOptions {
  /**
   * Seal every created item end to end: the service stores only ciphertext it cannot read, and
   * this client opens sealed items on every read (list, pull, sync, subscribe). The key needs
   * `settings:read` (and once, for the first sealing client, `settings:write`) to reach the salt.
   */
  seal?: { passphrase: string };
}

/** A sealed item that this passphrase cannot open (another passphrase sealed it). */
export class WrongPassphrase extends Error {
  constructor(readonly keyId: string) {
    super(
      `wrong passphrase: this sealed item was sealed with another passphrase (key ${keyId}), so the clipboard client cannot open it`,
    );
  }
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const IV_BYTES = 12;
const b64url = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64url');

interface Keys {
  aes: CryptoKey;
  hmac: CryptoKey;
  keyId: string;
}

interface SealedItem {
  type: string;
  content: string;
  keyId?: string;
  [field: string]: unknown;
}

async function deriveKeys(passphrase: string, salt: string): Promise<Keys> {
  const bytes = await scryptAsync(
    encoder.encode(passphrase.normalize('NFC')),
    Buffer.from(salt, 'base64url'),
    SEAL_KDF,
  );
  const aes = await crypto.subtle.importKey('raw', bytes.slice(0, 32), 'AES-GCM', false, ['encrypt', 'decrypt']);
  const hmac = await crypto.subtle.importKey('raw', bytes.slice(32), { name: 'HMAC', hash: 'SHA-256' }, false, [
    'sign',
  ]);
  bytes.fill(0);
  // Names the key without revealing it: a wrong passphrase shows as another keyId, before any decryption.
  const keyId = `s1.${b64url(new Uint8Array(await crypto.subtle.sign('HMAC', hmac, encoder.encode('clipboard seal key id')))).slice(0, 22)}`;
  return { aes, hmac, keyId };
}

/** The item's plaintext (its real type and content) as the sealed content: base64url of IV and AES-GCM output. */
async function seal(
  keys: Keys,
  item: { type: string; content: string },
): Promise<{ content: string; dedupeKey: string }> {
  const plaintext = encoder.encode(JSON.stringify({ type: item.type, content: item.content }));
  const iv = crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const sealed = new Uint8Array(await crypto.subtle.encrypt({ name: 'AES-GCM', iv }, keys.aes, plaintext));
  const mac = new Uint8Array(await crypto.subtle.sign('HMAC', keys.hmac, plaintext));
  return { content: b64url(new Uint8Array([...iv, ...sealed])), dedupeKey: b64url(mac) };
}

async function open(keys: Keys, item: SealedItem): Promise<{ type: string; content: string }> {
  if (item.keyId !== keys.keyId) throw new WrongPassphrase(item.keyId ?? '(none)');
  const bytes = Buffer.from(item.content, 'base64url');
  try {
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: bytes.subarray(0, IV_BYTES) },
      keys.aes,
      bytes.subarray(IV_BYTES),
    );
    return JSON.parse(decoder.decode(plain)) as { type: string; content: string };
  } catch {
    throw new WrongPassphrase(item.keyId);
  }
}

/** Opens every sealed item in an answer (a list, an item, a change, a page of changes), in place. */
async function openAll(keys: Keys, value: unknown): Promise<void> {
  if (Array.isArray(value)) {
    for (const v of value) await openAll(keys, v);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  if (record.type === 'sealed' && typeof record.content === 'string' && 'keyId' in record) {
    const { type, content } = await open(keys, record as SealedItem);
    Object.assign(record, { type, content, sealed: true });
    return;
  }
  for (const v of Object.values(record)) await openAll(keys, v);
}

/** A created item (a POST body, a sync upsert's data) sealed, unless it is one already. */
async function sealItem(keys: Keys, item: SealedItem): Promise<SealedItem> {
  if (item.type === 'sealed') return item;
  return { ...item, type: 'sealed', keyId: keys.keyId, ...(await seal(keys, item)) };
}

/** The account's salt: the one in its settings, or a new one this client sets (write-once; a race reads the winner's). */
async function accountSalt(client: ServiceClient<ClipboardPaths, ClipboardChange>): Promise<string> {
  const read = async () => {
    const { data, error, response } = await client.GET('/api/settings');
    if (!data)
      throw new Error(
        `the clipboard settings could not be read (HTTP ${response.status} ${JSON.stringify(error)}): sealing needs settings:read`,
      );
    return data.sealSalt;
  };
  const stored = await read();
  if (stored) return stored;
  const fresh = b64url(crypto.getRandomValues(new Uint8Array(16)));
  const { response, error } = await client.PUT('/api/settings', { body: { sealSalt: fresh } });
  if (response.status === 409) return (await read())!;
  if (!response.ok)
    throw new Error(
      `the seal salt could not be stored (HTTP ${response.status} ${JSON.stringify(error)}): the first sealing client needs settings:write`,
    );
  return fresh;
}

const CREATE = /\/api\/clipboard\/?$/;
const SYNC = /\/api\/clipboard\/sync\/?$/;

/**
 * A typed clipboard client (see createClipboardClient in services.generated.ts); with `seal`, it
 * seals each item it creates (POST /api/clipboard and sync upserts) and opens each sealed item it
 * reads. Snippets stay plain (they are templates).
 */
export function createClipboardClient({
  seal: sealing,
  ...options
}: ClipboardClientOptions): ServiceClient<ClipboardPaths, ClipboardChange> {
  const client = createPlainClipboardClient(options);
  if (!sealing) return client;
  // The keys are derived once, on first use, from a client without this middleware.
  let keys: Promise<Keys> | undefined;
  const keysOf = () => {
    keys ??= accountSalt(createPlainClipboardClient(options)).then((salt) => deriveKeys(sealing.passphrase, salt));
    keys.catch(() => {
      keys = undefined;
    });
    return keys;
  };
  const middleware: Middleware = {
    async onRequest({ request }) {
      const url = new URL(request.url);
      if (request.method !== 'POST' || !(CREATE.test(url.pathname) || SYNC.test(url.pathname))) return undefined;
      const body = (await request.clone().json()) as Record<string, unknown>;
      const k = await keysOf();
      if (SYNC.test(url.pathname)) {
        const changes = (body.changes ?? []) as Array<{ entity: string; op: string; data?: SealedItem }>;
        for (const c of changes)
          if (c.entity === 'item' && c.op === 'upsert' && c.data) c.data = await sealItem(k, c.data);
      } else {
        Object.assign(body, await sealItem(k, body as SealedItem));
      }
      return new Request(request, { body: JSON.stringify(body) });
    },
    async onResponse({ response }) {
      if (!response.ok || !response.headers.get('content-type')?.includes('application/json')) return undefined;
      const body: unknown = await response.clone().json();
      await openAll(await keysOf(), body);
      return new Response(JSON.stringify(body), {
        status: response.status,
        statusText: response.statusText,
        headers: response.headers,
      });
    },
  };
  client.use(middleware);
  const subscribePlain = client.subscribe.bind(client);
  return Object.assign(client, {
    subscribe: (o: Parameters<typeof subscribePlain>[0]) =>
      subscribePlain({
        ...o,
        onChange: async (change, id) => {
          await openAll(await keysOf(), change);
          await o.onChange(change, id);
        },
      }),
  });
}
