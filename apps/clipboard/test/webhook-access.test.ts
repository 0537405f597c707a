import { webhookSuite } from '@app/devstack';
import service from '../src/service.js';
import { startTestApp } from './helpers/harness.js';

webhookSuite({
  declaration: service,
  event: { type: 'clipboard.item.created', scope: 'clipboard:read', readPath: '/api/clipboard' },
  async emit(t, auth, marker) {
    await t
      .http()
      .post('/api/clipboard')
      .set('Authorization', auth)
      .send({ type: 'text', content: marker, source: 'api' })
      .expect(201);
  },
  start: startTestApp,
});
