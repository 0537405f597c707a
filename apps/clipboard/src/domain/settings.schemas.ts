import { SENSITIVE_TTL } from './limits.js';

// The settings' request schema (the routes compile it; the domain's types and the document come from it).

export const settingsPatchSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  description: 'Partial update: only the fields sent change. Unknown fields and an empty object are 400.',
  properties: {
    historyLimit: {
      type: 'integer',
      format: 'int32',
      minimum: 10,
      maximum: 100_000,
      description:
        'How many non-favorite items are kept (default 1000). Favorites never count and are never pruned. Enforced when an item is added and when the limit is lowered (the oldest non-favorites beyond it are deleted at once).',
    },
    retentionDays: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: 3650,
      description:
        '0 (default): keep forever. Otherwise non-favorite items older than this many days are no longer listed and are deleted on the next write (an item added, or this setting changed).',
    },
    captureEnabled: {
      type: 'boolean',
      description:
        'Client preference (default true): whether desktop and mobile clients capture the clipboard. The server stores and syncs it; API creates are not affected.',
    },
    sensitiveItemTtlSeconds: {
      type: 'integer',
      format: 'int32',
      minimum: SENSITIVE_TTL.min,
      maximum: SENSITIVE_TTL.max,
      description: `How long a sensitive item lives, in seconds (default ${SENSITIVE_TTL.default}); applies to items made sensitive from then on.`,
    },
    sealSalt: {
      type: 'string',
      minLength: 22,
      maxLength: 64,
      pattern: '^[A-Za-z0-9_-]{22,64}$',
      description:
        "The salt sealing clients derive the account's key with (base64url of at least 16 random bytes). Write-once: set by the first sealing client; sending the stored value again changes nothing, another value is 409 `seal_salt_set`.",
    },
  },
} as const;
