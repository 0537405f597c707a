import type { ServiceDeclaration } from '@app/auth/runtime';
import { __NAME___EVENTS } from './events.js';

/** The __name__ service, declared once: everything that starts, routes or lists it reads this. */
export default {
  name: '__name__',
  title: '__Title__',
  port: __port__,
  envelope: 'rich',
  scopes: ['__name__:read', '__name__:write', 'webhooks'],
  paths: {
    api: '/api',
    families: ['/api/__name__'],
    streams: ['/api/__name__/changes/stream'],
    keys: '/api/__name__/keys',
    webhooks: '/api/__name__/webhooks',
  },
  limits: {
    bodyLimitBytes: 64 * 1024,
    rateLimits: [{ name: 'api', variable: 'RATE_LIMIT_PER_MINUTE', perMinute: 300 }],
  },
  events: __NAME___EVENTS,
  roles: ['api', 'worker'],
  toolsets: ['default', 'webhooks', 'all'],
  load: () => import('./app.js'),
  loadAdmin: () => import('./admin.js'),
} satisfies ServiceDeclaration;
