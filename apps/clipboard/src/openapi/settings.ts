import { body, common, json, ref, resp, scope, withBody } from './shared.js';

// The account's clipboard settings.

export const settings = {
  type: 'object',
  additionalProperties: false,
  required: ['historyLimit', 'retentionDays', 'captureEnabled', 'sensitiveItemTtlSeconds', 'sealSalt', 'updatedAt'],
  properties: {
    historyLimit: { type: 'integer' },
    retentionDays: { type: 'integer' },
    captureEnabled: { type: 'boolean' },
    sensitiveItemTtlSeconds: { type: 'integer' },
    sealSalt: { type: ['string', 'null'], description: 'null until a sealing client sets it.' },
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
      responses: {
        200: json(ref('Settings'), 'The full settings after the update'),
        409: resp('Conflict'),
        ...withBody,
      },
    },
  },
};
