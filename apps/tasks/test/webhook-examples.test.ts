import { webhookExamplesSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import service from '../src/service.js';
import { startTestApp } from './helpers/harness.js';

const inMs = (ms: number) => new Date(Date.now() + ms).toISOString();

webhookExamplesSuite({
  declaration: service,
  document: openapiDocument,
  start: startTestApp,
  async produce(t, c) {
    const api = (method: 'post' | 'patch' | 'put' | 'delete', path: string, body?: object) =>
      t.http()[method](`/api/v1${path}`).set('Authorization', c.auth).send(body);
    // Due in 2 s with a reminder at 1 s: task.due and reminder.fired come while the rest is made.
    const call = (
      await api('post', '/tasks', {
        title: 'Call the plumber',
        notes: 'About the kitchen sink',
        dueAt: inMs(2_000),
        priority: 'high',
        tags: ['home'],
      }).expect(201)
    ).body.item;
    await api('post', `/tasks/${call.id}/reminders`, { at: inMs(1_000) }).expect(201);
    await api('patch', `/tasks/${call.id}`, { title: 'Call the plumber back' }).expect(200);
    const buy = (await api('post', '/tasks', { title: 'Buy milk', tags: ['errands'] }).expect(201)).body.item;
    await api('put', `/tasks/${buy.id}/position`, { afterId: null }).expect(200);
    await api('post', `/tasks/${buy.id}/complete`).expect(200);
    await api('post', `/tasks/${buy.id}/reopen`).expect(200);
    await api('delete', `/tasks/${buy.id}`).expect(200);
  },
});
