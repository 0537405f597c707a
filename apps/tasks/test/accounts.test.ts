import { accountsSuite } from '@app/devstack';
import { ALLOWED_ORIGIN, loadConfig, startTestApp } from './helpers/harness.js';

accountsSuite({
  service: 'tasks',
  envelope: 'rich',
  keysPath: '/api/v1/keys',
  readPath: '/api/v1/tasks',
  scopes: ['tasks:read', 'tasks:write', 'webhooks'],
  allowedOrigin: ALLOWED_ORIGIN,
  loadConfig,
  start: startTestApp,
});
