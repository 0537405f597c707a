import type { ServiceDeclaration } from '@app/auth/runtime';
import { TASK_EVENTS } from './events.js';

/** The tasks service, declared once: everything that starts, routes or lists it reads this. */
export default {
  name: 'tasks',
  title: 'Tasks',
  port: 3001,
  envelope: 'rich',
  scopes: ['tasks:read', 'tasks:write', 'webhooks'],
  paths: {
    api: '/api/v1',
    home: '/api/v1/tasks',
    families: ['/api/v1'],
    streams: ['/api/v1/tasks/changes/stream'],
    keys: '/api/v1/keys',
    webhooks: '/api/v1/webhooks',
  },
  limits: {
    bodyLimitBytes: 256 * 1024,
    rateLimits: [{ name: 'api', variable: 'RATE_LIMIT_PER_MINUTE', perMinute: 600 }],
  },
  events: TASK_EVENTS,
  roles: ['api', 'worker'],
  toolsets: ['default', 'webhooks', 'all'],
  load: () => import('./app.js'),
  loadAdmin: () => import('./admin.js'),
} satisfies ServiceDeclaration;
