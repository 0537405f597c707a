import { openapiDocument } from '../src/openapi.js';
import { startTestApp, type Caller, type TestApp } from './helpers/harness.js';
import { createTask } from './helpers/factories.js';

let t: TestApp;
let c: Caller;
beforeAll(async () => {
  t = await startTestApp({ RATE_LIMIT_PER_MINUTE: '100000' });
  c = await t.caller();
});
afterAll(() => t.close());

/** The documented `maxLength` of a header parameter of `PATCH /api/v1/tasks/{id}`. */
function headerMaxLength(name: string): number {
  const params = (openapiDocument.paths['/api/v1/tasks/{id}'].patch as unknown as { parameters: Array<{ name: string; schema: { maxLength?: number } }> }).parameters;
  return params.find((p) => p.name === name)!.schema.maxLength!;
}

describe('documented bounds of headers and path parameters are enforced', () => {
  it('answers 400 for an If-Match over its maxLength', async () => {
    const task = await createTask(t, c, { title: 'bounded' });
    const max = headerMaxLength('If-Match');
    const tag = `"${task.updatedAt}"`;
    const over = `${'"x", '.repeat(max)}${tag}`;
    const res = await t.http().patch(`/api/v1/tasks/${task.id}`).set('Authorization', c.auth).set('If-Match', over).send({ title: 'x' }).expect(400);
    expect(res.body.error.details).toEqual([{ path: 'If-Match', message: expect.stringContaining(String(max)) }]);
  });

  it('answers 400 for an X-Timezone over its maxLength', async () => {
    const max = headerMaxLength('X-Timezone');
    const res = await t.http().get('/api/v1/tasks').set('Authorization', c.auth).set('X-Timezone', `Europe/${'B'.repeat(max)}`).expect(400);
    expect(res.body.error.details[0].path).toBe('X-Timezone');
  });

  it('answers 404 for a path id over its maxLength (not a UUID)', async () => {
    await t.http().get(`/api/v1/tasks/${'a'.repeat(37)}`).set('Authorization', c.auth).expect(404);
  });
});
