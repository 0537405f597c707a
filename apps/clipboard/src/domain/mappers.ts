import type { ItemRow } from '../db/items.repository.js';
import type { SnippetRow } from '../db/snippets.repository.js';
import type { StateRow } from '../db/state.repository.js';

export interface Item {
  id: string;
  type: string;
  content: string;
  source: string;
  favorite: boolean;
  sensitive: boolean;
  /** A sensitive item's deletion time. */
  expiresAt?: string;
  /** A sealed item's key name and keyed hash of its plaintext. */
  keyId?: string;
  dedupeKey?: string;
  createdAt: string;
  updatedAt: string;
}

export interface Snippet {
  id: string;
  name: string;
  content: string;
  keyword: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface Settings {
  historyLimit: number;
  retentionDays: number;
  captureEnabled: boolean;
  sensitiveItemTtlSeconds: number;
  sealSalt: string | null;
  updatedAt: string | null;
}

/** What an account has before it changes anything (the column defaults of account_state). */
const DEFAULT_SETTINGS: Settings = Object.freeze({
  historyLimit: 1000,
  retentionDays: 0,
  captureEnabled: true,
  sensitiveItemTtlSeconds: 60,
  sealSalt: null,
  updatedAt: null,
});

export function toItem(r: ItemRow): Item {
  return {
    id: r.id,
    type: r.type,
    content: r.content,
    source: r.source,
    favorite: r.favorite,
    sensitive: r.sensitive,
    ...(r.expires_at !== null && { expiresAt: r.expires_at }),
    ...(r.key_id !== null && { keyId: r.key_id }),
    ...(r.dedupe_key !== null && { dedupeKey: r.dedupe_key }),
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** An item as it leaves the account (webhook events): a sensitive item without its content. */
export function toSharedItem(r: ItemRow): Omit<Item, 'content'> & { content?: string } {
  const { content, ...rest } = toItem(r);
  return r.sensitive ? rest : { ...rest, content };
}

/** Whether a value is an item as the API returns it. */
const isItem = (v: unknown): v is Item =>
  typeof v === 'object' && v !== null && 'sensitive' in v && 'type' in v && 'content' in v;

/**
 * `body` with every sensitive or sealed item in it, at any depth (a list, a change's data, a
 * stream page), replaced by `hide(item)`: what an assistant may see of the account's items.
 */
export function hidePrivateContent(body: unknown, hide: (item: Item) => object): unknown {
  if (Array.isArray(body)) return body.map((v) => hidePrivateContent(v, hide));
  if (typeof body !== 'object' || body === null) return body;
  if (isItem(body)) return body.sensitive || body.type === 'sealed' ? hide(body) : body;
  return Object.fromEntries(Object.entries(body).map(([k, v]) => [k, hidePrivateContent(v, hide)]));
}

/**
 * Items as OAuth callers (an assistant's connected app) see them on REST, as MCP shows them:
 * a sensitive or sealed item's `content` null.
 */
export const assistantView = (body: unknown): unknown =>
  hidePrivateContent(body, (item) => ({ ...item, content: null }));

export function toSnippet(r: SnippetRow): Snippet {
  return {
    id: r.id,
    name: r.name,
    content: r.content,
    keyword: r.keyword,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

type SettingsColumns =
  | 'history_limit'
  | 'retention_days'
  | 'capture_enabled'
  | 'sensitive_ttl_seconds'
  | 'seal_salt'
  | 'settings_updated_at';

export function toSettings(r: Pick<StateRow, SettingsColumns> | undefined): Settings {
  if (!r) return { ...DEFAULT_SETTINGS };
  return {
    historyLimit: r.history_limit,
    retentionDays: r.retention_days,
    captureEnabled: r.capture_enabled,
    sensitiveItemTtlSeconds: r.sensitive_ttl_seconds,
    sealSalt: r.seal_salt,
    updatedAt: r.settings_updated_at,
  };
}
