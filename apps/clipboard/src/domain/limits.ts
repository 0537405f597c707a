/** The clipboard's limits: the domain enforces them, and the OpenAPI document (openapi/shared.ts) states them. */

/** Largest item content, in characters. */
export const MAX_ITEM_CONTENT = 131_072;
/** Largest sealed item content (base64url ciphertext), in characters. */
export const MAX_SEALED_CONTENT = 180_000;
/** How long a sensitive item lives unless the account says otherwise, and the bounds of that setting, in seconds. */
export const SENSITIVE_TTL = { default: 60, min: 5, max: 3600 } as const;
/** Longest text search (`q`), in characters. */
export const MAX_QUERY = 200;
/** Text searches of one account running at once (across replicas); one more is 429. */
export const MAX_SEARCHES_PER_ACCOUNT = 2;
/** Live snippets per account (the next one is 409). */
export const MAX_SNIPPETS = 200;
/** Largest snippet content, in characters. */
export const MAX_SNIPPET_CONTENT = 20_000;
/** Ids in one bulk delete. */
export const MAX_BULK_IDS = 500;
/** Changes in one sync request. */
export const MAX_SYNC_CHANGES = 500;
/** How long tombstones (and sync receipts) are kept, in days; an older cursor is 410. */
export const TOMBSTONE_DAYS = 30;
