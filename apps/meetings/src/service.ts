import type { ServiceDeclaration } from '@app/auth/runtime';
import { MEETING_EVENTS } from './events.js';

/** The meetings service, declared once: everything that starts, routes or lists it reads this. */
export default {
  name: 'meetings',
  title: 'Meetings',
  port: 3002,
  envelope: 'rich',
  scopes: ['meetings:read', 'meetings:write', 'webhooks'],
  paths: {
    api: '/api',
    families: [
      '/api/me',
      '/api/notes',
      '/api/people',
      '/api/series',
      '/api/meetings',
      '/api/items',
      '/api/actions',
      '/api/search',
      '/api/webhooks',
      '/api/changes',
      '/api/calendar',
    ],
    streams: ['/api/changes/stream'],
    keys: '/api/me/keys',
    webhooks: '/api/webhooks',
  },
  limits: {
    // The spec's 128 KB request body limit.
    bodyLimitBytes: 128 * 1024,
    // The spec's numbers: 120 authenticated reads and 120 writes per account per minute.
    rateLimits: [
      { name: 'reads', variable: 'RATE_LIMIT_READS_PER_MINUTE', perMinute: 120, applies: 'reads' },
      { name: 'writes', variable: 'RATE_LIMIT_WRITES_PER_MINUTE', perMinute: 120, applies: 'writes' },
    ],
    // The spec's network-level cap: 180 API requests per minute per client address.
    networkCap: {
      variable: 'RATE_LIMIT_NETWORK_PER_MINUTE',
      perMinute: 180,
      // Looser even across one of the cap's window boundaries: a burst of 360, then 10 a second.
      gatewayGuard: { rate: '600r/m', burst: 360 },
    },
  },
  events: MEETING_EVENTS,
  roles: ['api', 'worker'],
  toolsets: ['default', 'webhooks', 'all'],
  load: () => import('./app.js'),
  loadAdmin: () => import('./admin.js'),
} satisfies ServiceDeclaration;
