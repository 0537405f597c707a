import { webhookSuite } from '@app/devstack';
import service from '../src/service.js';
import { startTestApp } from './helpers/harness.js';

webhookSuite({
  declaration: service,
  event: { type: 'task.created', scope: 'tasks:read', readPath: '/api/v1/tasks' },
  async emit(t, auth, marker) {
    await t.http().post('/api/v1/tasks').set('Authorization', auth).send({ title: marker }).expect(201);
  },
  start: startTestApp,
});
