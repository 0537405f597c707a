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
  const params = (
    openapiDocument.paths['/api/v1/tasks/{id}'].patch as unknown as {
      parameters: Array<{ name: string; schema: { maxLength?: number } }>;
    }
  ).parameters;
  return params.find((p) => p.name === name)!.schema.maxLength!;
}

describe('documented bounds of headers and path parameters are enforced', () => {
  it('answers 400 for an If-Match over its maxLength', async () => {
    const task = await createTask(t, c, { title: 'bounded' });
    const max = headerMaxLength('If-Match');
    const tag = `"${task.updatedAt}"`;
    const over = `${'"x", '.repeat(max)}${tag}`;
    const res = await t
      .http()
      .patch(`/api/v1/tasks/${task.id}`)
      .set('Authorization', c.auth)
      .set('If-Match', over)
      .send({ title: 'x' })
      .expect(400);
    expect(res.body.error.details).toEqual([{ path: 'If-Match', message: expect.stringContaining(String(max)) }]);
  });

  it('answers 400 for an X-Timezone over its maxLength', async () => {
    const max = headerMaxLength('X-Timezone');
    const res = await t
      .http()
      .get('/api/v1/tasks')
      .set('Authorization', c.auth)
      .set('X-Timezone', `Europe/${'B'.repeat(max)}`)
      .expect(400);
    expect(res.body.error.details[0].path).toBe('X-Timezone');
  });

  it('answers 404 for a path id over its maxLength (not a UUID)', async () => {
    await t
      .http()
      .get(`/api/v1/tasks/${'a'.repeat(37)}`)
      .set('Authorization', c.auth)
      .expect(404);
  });
});

describe('documented bounds of nullable string fields are enforced', () => {
  // `type: [string, null]` fields once went unbounded (the Spectral input rule missed them): an
  // assigneeId of 129 KB was stored.
  it.each([
    ['assigneeId', 200],
    ['priority', 20],
    ['dueAt', 64],
    ['parentId', 36],
  ])('answers 400 for a %s over its maxLength of %i, on create and on edit', async (field, max) => {
    const documented = (
      openapiDocument.components.schemas as unknown as Record<
        string,
        { properties: Record<string, { maxLength?: number }> }
      >
    ).TaskInput!.properties[field]!.maxLength;
    expect(documented).toBe(max);
    const over = 'a'.repeat(max + 1);
    const created = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .send({ title: 'bounded', [field]: over })
      .expect(400);
    expect(created.body.error.details[0].path).toBe(`/${field}`);
    const task = await createTask(t, c, { title: 'bounded edit' });
    await t
      .http()
      .patch(`/api/v1/tasks/${task.id}`)
      .set('Authorization', c.auth)
      .send({ [field]: 'b'.repeat(129 * 1024) })
      .expect(400);
  });

  it('keeps an assigneeId of exactly 200 characters', async () => {
    const res = await t
      .http()
      .post('/api/v1/tasks')
      .set('Authorization', c.auth)
      .send({ title: 'bounded', assigneeId: 'a'.repeat(200) })
      .expect(201);
    expect(res.body.item.assigneeId).toHaveLength(200);
  });
});
