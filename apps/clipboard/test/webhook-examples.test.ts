import { webhookExamplesSuite } from '@app/devstack';
import { openapiDocument } from '../src/openapi.js';
import service from '../src/service.js';
import { startTestApp } from './helpers/harness.js';

webhookExamplesSuite({
  declaration: service,
  document: openapiDocument,
  start: startTestApp,
  async produce(t, c) {
    const api = (method: 'post' | 'put' | 'patch' | 'delete', path: string, body?: object) =>
      t.http()[method](`/api${path}`).set('Authorization', c.auth).send(body);
    const item = (await api('post', '/clipboard', { type: 'text', content: 'hello', source: 'api' }).expect(201)).body;
    await api('patch', `/clipboard/${item.id}/favorite`, { favorite: true }).expect(200);
    await api('delete', `/clipboard/${item.id}`).expect(200);
    const snippet = (await api('post', '/snippets', { name: 'sig', content: 'Best, me', keyword: 'sig' }).expect(201))
      .body;
    await api('put', '/snippets', {
      items: [{ id: snippet.id, name: 'sig', content: 'Best regards, me', keyword: 'sig' }],
    }).expect(200);
    await api('delete', `/snippets/${snippet.id}`).expect(200);
    await api('put', '/settings', { historyLimit: 500 }).expect(200);
  },
});
