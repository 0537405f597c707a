import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';
import { repoRoot } from './root.js';
import type { TestApp } from './test-app.js';
import { startReceiver, type Receiver } from './webhook-receiver.js';
import { WEBHOOK_SUITE_ENV } from './suite-env.js';

type App = Pick<TestApp<any, any>, 'http' | 'caller' | 'close'>;
type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
/** An event of the document's `webhooks` map: its delivered body's schema and its one example. */
interface DocumentedEvent {
  post: {
    parameters: Array<{ name: string; in: string; schema: object }>;
    requestBody: { content: { 'application/json': { schema: object; example?: Json } } };
  };
}

/** What the examples suite needs to know about one service under test. */
export interface WebhookExamplesTarget<A extends App> {
  /** The service's declaration (apps/<svc>/src/service.ts): its name, its events and its webhooks path. */
  declaration: { name: string; events: Readonly<Record<string, string>>; paths: { webhooks: string } };
  /** The service's OpenAPI document (apps/<svc>/src/openapi.ts). */
  document: object;
  start(env: Record<string, string>, options?: { webhooks?: boolean }): Promise<A>;
  /** Makes every event type of the declaration happen for real, as `c` (a key holding every scope). */
  produce(t: A, c: Awaited<ReturnType<A['caller']>>): Promise<void>;
}

/**
 * Where a received body and an example differ in shape: the JSON pointers whose keys differ or
 * whose kind (object, array, anything else) differs. Values may differ; an array's first element
 * stands for all (an empty array matches any array).
 */
function shapeDifferences(example: Json, real: Json, at = ''): string[] {
  const kind = (v: Json) => (Array.isArray(v) ? 'array' : v !== null && typeof v === 'object' ? 'object' : 'value');
  if (kind(example) !== kind(real)) return [`${at || '/'}: ${kind(example)} in the example, ${kind(real)} delivered`];
  if (Array.isArray(example) && Array.isArray(real))
    return example.length && real.length ? shapeDifferences(example[0]!, real[0]!, `${at}/0`) : [];
  if (kind(example) !== 'object') return [];
  const [e, r] = [example as Record<string, Json>, real as Record<string, Json>];
  const keys = [...new Set([...Object.keys(e), ...Object.keys(r)])].sort();
  return keys.flatMap((k) =>
    !(k in e)
      ? [`${at}/${k}: delivered, not in the example`]
      : !(k in r)
        ? [`${at}/${k}: in the example, not delivered`]
        : shapeDifferences(e[k]!, r[k]!, `${at}/${k}`),
  );
}

/**
 * The examples docs/workflows-and-webhooks.md gives for `service`: under "### <service>" of its
 * "## Payload examples" section, each event's name in a "#### `<type>`" heading and its example
 * in the JSON fence that follows.
 */
function docExamples(markdown: string, service: string): Record<string, Json> {
  const section = markdown.split(/^## /m).find((s) => s.startsWith('Payload examples')) ?? '';
  const part = section.split(/^### /m).find((s) => s.startsWith(`${service}\n`)) ?? '';
  const found: Record<string, Json> = {};
  for (const m of part.matchAll(/^#### `([^`]+)`\n[^]*?```json\n([^]*?)```/gm)) found[m[1]!] = JSON.parse(m[2]!);
  return found;
}

/**
 * Issue 60: the document's `webhooks` map names every event the service sends (and `ping`), each
 * with a schema and one example; every event type, made to happen for real and received at a real
 * HTTP receiver, validates against its schema and has its example's shape; the guide gives the same
 * examples.
 */
export function webhookExamplesSuite<A extends App>(target: WebhookExamplesTarget<A>): void {
  const { name: service, events, paths } = target.declaration;
  const documented = (target.document as { webhooks?: Record<string, DocumentedEvent> }).webhooks ?? {};
  const content = (type: string) => documented[type]?.post.requestBody.content['application/json'];
  const types = [...Object.keys(events), 'ping'];
  const schemaPointer = (type: string) =>
    `openapi.json#/webhooks/${type}/post/requestBody/content/application~1json/schema`;
  let t: A;
  let receiver: Receiver;
  beforeAll(async () => {
    t = await target.start(WEBHOOK_SUITE_ENV, { webhooks: true });
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
    await t?.close();
  });

  /** Validates a body against the schema of `type`'s entry in the document's `webhooks` map. */
  let validator: (type: string) => ValidateFunction;
  beforeAll(() => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(target.document, 'openapi.json');
    const compiled = new Map<string, ValidateFunction>();
    validator = (type) =>
      compiled.get(type) ?? compiled.set(type, ajv.compile({ $ref: schemaPointer(type) })).get(type)!;
  });
  let headerProblems: (type: string, headers: Record<string, unknown>) => string[];
  beforeAll(() => {
    const ajv = new Ajv2020({ strict: false });
    headerProblems = (type, headers) =>
      documented[type]!.post.parameters.filter((p) => p.in === 'header')
        .filter((p) => !ajv.validate(p.schema, headers[p.name]))
        .map((p) => `${type}: header ${p.name} ${JSON.stringify(headers[p.name])} is not as documented`);
  });
  const problemsOf = (type: string, body: unknown) => {
    const validate = validator(type);
    return validate(body) ? [] : (validate.errors ?? []).map((e) => `${type}: ${e.instancePath || '/'} ${e.message}`);
  };

  it('documents each event the service declares, and ping, in the webhooks map, with one example its schema validates', () => {
    expect(Object.keys(documented).sort()).toEqual([...types].sort());
    expect(types.filter((type) => content(type)?.example === undefined)).toEqual([]);
    expect(types.flatMap((type) => problemsOf(type, content(type)?.example))).toEqual([]);
  });

  it("sends every event type for real with the documented headers and a body that validates against its schema and has its example's shape", async () => {
    const c = (await t.caller()) as Awaited<ReturnType<A['caller']>>;
    const sub = (
      await t
        .http()
        .post(paths.webhooks)
        .set('Authorization', c.auth)
        .send({ url: receiver.url, events: Object.keys(events) })
        .expect(201)
    ).body as { id: string; secret: string };
    await t.http().post(`${paths.webhooks}/${sub.id}/test`).set('Authorization', c.auth).expect(202);
    await target.produce(t, c);
    const missing = () => types.filter((type) => !receiver.received.some((r) => r.event.type === type));
    await receiver.waitFor(() => missing().length === 0, 20_000).catch(() => undefined);
    expect(missing()).toEqual([]);

    const problems: string[] = [];
    for (const type of types) {
      const received = receiver.received.filter((r) => r.event.type === type);
      for (const r of received) {
        if (!receiver.verifies(r, sub.secret)) problems.push(`${type}: not signed with the secret`);
        problems.push(...problemsOf(type, JSON.parse(r.body)), ...headerProblems(type, r.headers));
      }
      // The example's shape is one the event really has (a new record's update has no previous:
      // some delivery of the type must match, else the first one's differences are named).
      const example = content(type)?.example;
      const differences = received.map((r) => shapeDifferences(example ?? null, JSON.parse(r.body)));
      if (!differences.some((d) => d.length === 0)) problems.push(...differences[0]!.map((d) => `${type} ${d}`));
    }
    expect(problems).toEqual([]);
  });

  it(`gives each example of the document in docs/workflows-and-webhooks.md under "### ${service}"`, () => {
    const markdown = readFileSync(join(repoRoot, 'docs', 'workflows-and-webhooks.md'), 'utf8');
    const given = docExamples(markdown, service);
    expect(Object.keys(given).sort()).toEqual([...types].sort());
    expect(given).toEqual(Object.fromEntries(types.map((type) => [type, content(type)?.example])));
  });
}
