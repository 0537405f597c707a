import { body, common, json, ref, scope, withBody } from './shared.js';

// The account's clipboard settings.

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
      description: 'How many non-favorite items are kept (default 1000). Favorites never count and are never pruned. Enforced when an item is added and when the limit is lowered (the oldest non-favorites beyond it are deleted at once).',
    },
    retentionDays: {
      type: 'integer',
      format: 'int32',
      minimum: 0,
      maximum: 3650,
      description: '0 (default): keep forever. Otherwise non-favorite items older than this many days are no longer listed and are deleted on the next write (an item added, or this setting changed).',
    },
    captureEnabled: { type: 'boolean', description: 'Client preference (default true): whether desktop and mobile clients capture the clipboard. The server stores and syncs it; API creates are not affected.' },
  },
} as const;

export const settings = {
  type: 'object',
  additionalProperties: false,
  required: ['historyLimit', 'retentionDays', 'captureEnabled', 'updatedAt'],
  properties: {
    historyLimit: { type: 'integer' },
    retentionDays: { type: 'integer' },
    captureEnabled: { type: 'boolean' },
    updatedAt: { type: ['string', 'null'], description: 'null until the settings are first changed.' },
  },
} as const;

export const settingsPaths = {
  '/api/settings': {
    get: {
      operationId: 'getSettings',
      tags: ['Settings'],
      summary: 'Read settings (defaults until changed)',
      description: scope('settings:read'),
      responses: { 200: json(ref('Settings'), 'Settings'), ...common },
    },
    put: {
      operationId: 'updateSettings',
      tags: ['Settings'],
      summary: 'Partially update settings',
      description: `${scope('settings:write')} Returns the full settings. Lowering historyLimit or setting retentionDays prunes at once.`,
      requestBody: body(ref('SettingsPatch')),
      responses: { 200: json(ref('Settings'), 'The full settings after the update'), ...withBody },
    },
  },
};
