import { accountsSuite } from '@app/devstack';
import { loadConfig } from '../src/config.js';
import { ALLOWED_ORIGIN, startTestApp } from './helpers/harness.js';

accountsSuite({
  service: 'clipboard',
  envelope: 'simple',
  keysPath: '/api/settings/keys',
  readPath: '/api/clipboard',
  scopes: ['clipboard:read', 'clipboard:write', 'snippets:read', 'snippets:write', 'settings:read', 'settings:write', 'webhooks'],
  allowedOrigin: ALLOWED_ORIGIN,
  loadConfig,
  start: startTestApp,
});
