import { webhookSuite } from '@app/devstack';
import service from '../src/service.js';
import { startTestApp } from './helpers/harness.js';

let day = 0;

webhookSuite({
  declaration: service,
  event: { type: 'note.updated', scope: 'meetings:read', readPath: '/api/series' },
  async emit(t, auth, marker) {
    // A new day's note each time (an existing one changes only at its revision).
    const date = new Date(Date.UTC(2030, 0, 1 + day++)).toISOString().slice(0, 10);
    await t.http().put(`/api/notes/${date}`).set('Authorization', auth).send({ today: marker }).expect(201);
  },
  start: startTestApp,
});
