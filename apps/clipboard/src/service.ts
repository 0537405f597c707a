import type { ServiceDeclaration } from '@app/auth/runtime';
import { CLIPBOARD_EVENTS } from './events.js';

/** The clipboard service, declared once: everything that starts, routes or lists it reads this. */
export default {
  name: 'clipboard',
  title: 'Clipboard',
  port: 3003,
  envelope: 'simple',
  scopes: [
    'clipboard:read',
    'clipboard:write',
    'snippets:read',
    'snippets:write',
    'settings:read',
    'settings:write',
    'webhooks',
  ],
  paths: {
    api: '/api',
    families: ['/api/clipboard', '/api/snippets', '/api/settings'],
    streams: ['/api/clipboard/pull/stream'],
    keys: '/api/settings/keys',
    webhooks: '/api/clipboard/webhooks',
  },
  limits: {
    bodyLimitBytes: 1024 * 1024,
    rateLimits: [{ name: 'api', variable: 'RATE_LIMIT_PER_MINUTE', perMinute: 300 }],
  },
  events: CLIPBOARD_EVENTS,
  roles: ['api', 'worker'],
  toolsets: ['default', 'webhooks', 'all'],
  load: () => import('./app.js'),
  loadAdmin: () => import('./admin.js'),
} satisfies ServiceDeclaration;
