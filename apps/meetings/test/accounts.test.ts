import { accountsSuite } from '@app/devstack';
import { ALLOWED_ORIGIN, loadConfig, startTestApp } from './helpers/harness.js';

accountsSuite({
  service: 'meetings',
  envelope: 'rich',
  keysPath: '/api/me/keys',
  readPath: '/api/series',
  scopes: ['meetings:read', 'meetings:write', 'webhooks'],
  allowedOrigin: ALLOWED_ORIGIN,
  loadConfig,
  start: startTestApp,
});
