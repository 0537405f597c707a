import { webhookExamplesSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import service from '../src/service.js';
import { addItem, createSeries } from './helpers/factories.js';
import { startTestApp } from './helpers/harness.js';

webhookExamplesSuite({
  declaration: service,
  document: openapiDocument,
  start: startTestApp,
  async produce(t, c) {
    const api = (method: 'put' | 'patch' | 'delete', path: string, body?: object) =>
      t.http()[method](path).set('Authorization', c.auth).send(body);
    const { series, meetings, person } = await createSeries(t, c);
    const meeting = meetings[0];
    await api('patch', `/api/meetings/${meeting.id}`, {
      baseRevision: meeting.revision,
      sharedNotes: 'Agenda: goals',
    }).expect(200);
    const item = await addItem(t, c, meeting.id);
    await api('patch', `/api/items/${item.id}`, { starred: true }).expect(200);
    await api('delete', `/api/items/${item.id}`).expect(204);
    // A new note, then a change of it: the second note.updated carries previous.
    const note = (await api('put', '/api/notes/2030-01-07', { today: 'Prepare the 1:1' }).expect(201)).body;
    await api('put', '/api/notes/2030-01-07', {
      baseRevision: note.revision,
      today: 'Prepare the 1:1 with Ada',
    }).expect(200);
    await api('patch', `/api/people/${person.id}`, { name: 'Ada L.' }).expect(200);
    await api('patch', `/api/series/${series.id}`, { startTime: '10:00' }).expect(200);
    await api('delete', `/api/series/${series.id}`).expect(200);
    await api('delete', `/api/people/${person.id}`).expect(200);
  },
});
