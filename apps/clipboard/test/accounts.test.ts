import { accountsSuite } from '@app/devstack';
import { ALLOWED_ORIGIN, loadConfig, startTestApp } from './helpers/harness.js';

accountsSuite({
  service: 'clipboard',
  envelope: 'simple',
  keysPath: '/api/settings/keys',
  readPath: '/api/clipboard',
  scopes: [
    'clipboard:read',
    'clipboard:write',
    'snippets:read',
    'snippets:write',
    'settings:read',
    'settings:write',
    'webhooks',
  ],
  allowedOrigin: ALLOWED_ORIGIN,
  loadConfig,
  start: startTestApp,
});
