import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SERVICES } from '@app/devstack';
import { startStack, type Service, type Stack } from './stack.js';

// The three documents' server is the gateway (`servers: [{ url: '/' }]` as published at
// /openapi/<service>.json): every path they list must be one the gateway routes to the service.
// The Portman run below (CONTRACT=1, a few minutes) sends the documents' own cases and fuzzed
// variations through the gateway and checks every answer against the documents.

let stack: Stack;
const keys = {} as Record<Service, string>;
const docs = {} as Record<Service, { paths: Record<string, Record<string, unknown>> }>;

beforeAll(async () => {
  stack = await startStack(
    // Limits out of the way: the run is thousands of requests from one address. Its webhooks
    // point at a closed local port. Sign-up open: the run signs up as its document says.
    Object.fromEntries(
      SERVICES.map((svc) => [
        svc,
        {
          SIGNUP: 'open',
          WEBHOOK_ALLOW_PRIVATE: '1',
          RATE_LIMIT_PER_MINUTE: '1000000',
          RATE_LIMIT_READS_PER_MINUTE: '1000000',
          RATE_LIMIT_WRITES_PER_MINUTE: '1000000',
          RATE_LIMIT_NETWORK_PER_MINUTE: '1000000',
        },
      ]),
    ),
    { gatewayVars: { MEETINGS_GUARD_RATE: '1000000r/s', MEETINGS_GUARD_BURST: 1000000 } },
  );
  for (const svc of SERVICES) {
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `contract-${svc}@example.test`);
    keys[svc] = (await stack.admin(svc, 'create-key', '--account', accountId)).key;
    docs[svc] = await (await fetch(`${stack.gateway}/openapi/${svc}.json`)).json();
  }
}, 180000);
afterAll(() => stack?.stop());

/** A documented path with its parameters filled: a random UUID for an id, a real date for a date. */
const concrete = (template: string) =>
  template.replace(/\{date\}/g, '2030-01-01').replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

describe('the OpenAPI documents and the gateway', () => {
  it('lists only paths the gateway routes to the service (none it answers with its own 404)', async () => {
    const unrouted: string[] = [];
    for (const svc of SERVICES) {
      for (const [template, item] of Object.entries(docs[svc].paths)) {
        const method = Object.keys(item).find((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))!;
        const res = await fetch(`${stack.gateway}${concrete(template)}`, {
          method: method.toUpperCase(),
          headers: { Authorization: `Bearer ${keys[svc]}` },
        });
        // The gateway's own answer for a path it does not route: 404 `route_not_found`. Any other
        // answer is left unread (a change stream would stay open for an hour).
        if (res.status !== 404) await res.body?.cancel();
        else if ((await res.text()).includes('"route_not_found"'))
          unrouted.push(`${svc}: ${method.toUpperCase()} ${template}`);
      }
    }
    expect(unrouted).toEqual([]);
  }, 120000);

  it('marks a request body optional only where the operation takes a request without one', async () => {
    // Body validation (400) comes before the record lookup (404), so a random id is enough to
    // see whether a missing body is refused.
    const refused: string[] = [];
    for (const svc of SERVICES) {
      for (const [template, item] of Object.entries(docs[svc].paths)) {
        for (const [method, op] of Object.entries(item as Record<string, { requestBody?: { required?: boolean } }>)) {
          if (!op.requestBody || op.requestBody.required) continue;
          const res = await fetch(`${stack.gateway}${concrete(template)}`, {
            method: method.toUpperCase(),
            headers: { Authorization: `Bearer ${keys[svc]}` },
          });
          if (res.status === 400) refused.push(`${svc}: ${method.toUpperCase()} ${template} ${await res.text()}`);
        }
      }
    }
    expect(refused).toEqual([]);
  }, 120000);
});

/**
 * Portman (OpenAPI -> Postman collection with contract tests and fuzzing variations, run by its
 * newman) over each document through the gateway. Fetched with npx at a pinned version, not a
 * workspace dependency: it pulls in ~300 packages (and needs `tslib`, which it does not declare).
 * npx needs the npm registry the first time (CI has it); after that its cache serves it offline.
 */
const contract = process.env.CONTRACT === '1' ? describe : describe.skip;
contract('Portman contract and fuzzing run (CONTRACT=1)', () => {
  it.each(SERVICES.map((svc) => [svc]))(
    '%s: every case answers as its document says',
    async (svc) => {
      const dir = mkdtempSync(join(tmpdir(), `contract-${svc}-`));
      const doc = join(dir, 'openapi.json');
      writeFileSync(doc, JSON.stringify(forPortman(docs[svc])));
      const { accountId } = await stack.admin(svc, 'create-account', '--email', `portman-${svc}@example.test`);
      const key = (await stack.admin(svc, 'create-key', '--account', accountId)).key as string;
      const cookie = (await stack.admin(svc, 'create-session', '--account', accountId)).cookie as string;
      const pathValues = await recordsFor(svc, accountId, key);
      const password = 'contract password 1';
      await stack.adminWithStdin(
        svc,
        `${password}\n`,
        'create-account',
        '--email',
        `login-${svc}@example.test`,
        '--password-stdin',
      );
      const overwrites = await overwritesFor(svc, key, pathValues, { email: `login-${svc}@example.test`, password });
      writeFileSync(join(dir, 'portman.json'), JSON.stringify(portmanConfig(svc, key, cookie, pathValues, overwrites)));
      const npx = (args: string[]) =>
        spawnSync('npx', ['--yes', ...args], { cwd: dir, encoding: 'utf8', timeout: 600_000 });
      // Portman writes the collection (its base URL the gateway); newman runs it and writes the report.
      const made = npx([
        '-p',
        '@apideck/portman@1.33.0',
        '-p',
        'tslib@2.8.1',
        'portman',
        '-l',
        doc,
        '-b',
        stack.gateway,
        '-o',
        join(dir, 'collection.json'),
        '--portmanConfigFile',
        join(dir, 'portman.json'),
        '--syncPostman',
        'false',
        '--includeTests',
        'true',
      ]);
      const skipped = dropVariations(join(dir, 'collection.json'));
      const run = npx([
        '-p',
        'newman@6.2.2',
        'newman',
        'run',
        join(dir, 'collection.json'),
        // A bound on each request all the same: a hung answer fails its case, not the whole run.
        '--timeout-request',
        '10000',
        '-r',
        'json',
        '--reporter-json-export',
        join(dir, 'report.json'),
      ]);
      writeFileSync(join(dir, 'portman.log'), [made.stdout, made.stderr, run.stdout, run.stderr].join('\n'));
      const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as NewmanReport;
      const stats = report.run.stats;
      const failures = report.run.failures.map((f) =>
        `${f.source?.name ?? '?'}: ${f.error.test ?? ''} ${f.error.message}`.slice(0, 300),
      );
      writeFileSync(
        join(dir, 'summary.txt'),
        `${svc}: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${failures.length} failures\n${failures.join('\n')}\n`,
      );
      process.stdout.write(
        `${svc}: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${stats.assertions.failed} failed, ${skipped} variations left out (${dir}/summary.txt)\n`,
      );
      expect({ exit: run.status === null ? run.error?.message : 'ran', failures }).toEqual({
        exit: 'ran',
        failures: [],
      });
    },
    900000,
  );
});

interface NewmanReport {
  run: {
    stats: { requests: { total: number }; assertions: { total: number; failed: number } };
    failures: Array<{ source?: { name?: string }; error: { test?: string; message: string } }>;
  };
}

type Doc = (typeof docs)[Service];

/**
 * The document Portman reads: without its `text/event-stream` operations (the change streams: a
 * stream stays open for an hour; the stream suites, streams.test.ts and each app's own, cover
 * it), and without `minLength: 0` (no bound at all, which Portman's fuzzing "breaks" with '').
 */
function forPortman(doc: Doc): Doc {
  const isStream = (op: any) => Object.values(op?.responses ?? {}).some((r: any) => r?.content?.['text/event-stream']);
  const paths = Object.fromEntries(
    Object.entries(doc.paths)
      .map(
        ([path, item]) => [path, Object.fromEntries(Object.entries(item).filter(([, op]) => !isStream(op)))] as const,
      )
      .filter(([, item]) => Object.keys(item).some((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))),
  );
  return JSON.parse(JSON.stringify({ ...doc, paths }), (key, value) =>
    key === 'minLength' && value === 0 ? undefined : value,
  );
}

/**
 * Fuzzed variations Portman makes that cannot break what they name, each with its reason; the
 * run leaves them out of the collection (and reports how many).
 */
const unbreakable: Array<(name: string, body: any) => boolean> = [
  // Portman takes a `required` inside if/then/else as unconditional: a WEEKLY series has no
  // monthDay to remove (the MONTHLY case is the meetings suite's).
  (name) => name.endsWith('[fuzz][required monthDay]'),
  // Likewise a bound inside `else`: 131073 characters breaks a non-sealed item's 131072, not the
  // sealed base item's 180000 (whose own bound its other two content variations break).
  (name, body) => name.endsWith('[fuzz][maximum length content]') && body?.content?.length === 131073,
];

function dropVariations(file: string): number {
  const collection = JSON.parse(readFileSync(file, 'utf8'));
  let dropped = 0;
  const keep = (items: any[]): any[] =>
    items
      .filter(
        (it) =>
          !unbreakable.some((test) =>
            test(it.name, it.request?.body?.raw ? JSON.parse(it.request.body.raw) : undefined),
          ) || (dropped++, false),
      )
      .map((it) => (it.item ? { ...it, item: keep(it.item) } : it));
  writeFileSync(file, JSON.stringify({ ...collection, item: keep(collection.item) }));
  return dropped;
}
type Post = (path: string, body: unknown) => Promise<string>;

/**
 * How a record a path's `{id}` names is made, by the collection path in front of `/{id}`: the
 * create operation's required fields, nothing more. A documented `{id}` path with no entry here
 * fails the run (a new resource needs its line), never a silent random id.
 */
const makers: Record<string, (post: Post, doc: Doc, collection: string) => Promise<string>> = {
  '/api/v1/tasks': (post) => post('/api/v1/tasks', { title: 'contract' }),
  '/api/people': (post) => post('/api/people', { name: 'contract' }),
  '/api/series': (post) => post('/api/series', series),
  // Off the series' Mondays: creating a series makes its meetings on them.
  '/api/meetings': async (post) =>
    post('/api/meetings', { seriesId: await post('/api/series', series), date: '2030-01-08' }),
  // A talking point: the one kind an item carry takes.
  '/api/items': async (post) =>
    post(`/api/meetings/${await makers['/api/meetings']!(post, {} as Doc, '')}/items`, {
      kind: 'TALKING_POINT',
      text: 'contract',
    }),
  // Distinct content: the same text again is the same item (clipboard dedupes).
  '/api/clipboard': (post) =>
    post('/api/clipboard', { type: 'text', content: `contract ${randomUUID()}`, source: 'api' }),
  '/api/snippets': (post) => post('/api/snippets', { name: 'contract', content: 'contract' }),
};
const series = {
  title: 'contract',
  cadence: 'WEEKLY',
  weekday: 1,
  startTime: '09:00',
  durationMinutes: 30,
  timezone: 'UTC',
  startDate: '2030-01-07',
};

/** A subscription to the first event its document lists, at an address the run never reads. */
async function makeWebhook(post: Post, doc: Doc, collection: string): Promise<string> {
  const events = (schema: any): string[] | undefined =>
    schema?.$ref
      ? events(
          schema.$ref
            .split('/')
            .slice(1)
            .reduce((at: any, part: string) => at[part], doc),
        )
      : (schema?.properties?.events?.items?.enum ??
        [...(schema?.oneOf ?? []), ...(schema?.allOf ?? [])].map(events).find(Boolean));
  const schema = events((doc.paths[collection]!.post as any).requestBody.content['application/json'].schema)!;
  return post(collection, { url: 'http://127.0.0.1:9/contract', events: [schema[0]] });
}

/**
 * A real record for every operation whose path has a parameter (one each, so a DELETE takes
 * nothing from the operations after it), keyed `METHOD /path/:param` as the collection spells it.
 */
async function recordsFor(svc: Service, accountId: string, key: string): Promise<Record<string, string>> {
  const post = poster(key);
  const values: Record<string, string> = {};
  for (const [template, item] of Object.entries(docs[svc].paths)) {
    const param = /\{(\w+)\}/.exec(template);
    if (!param) continue;
    const collection = template.slice(0, param.index - 1);
    for (const method of Object.keys(item)) {
      const name = `${method.toUpperCase()} ${template.replace(/\{(\w+)\}/g, ':$1')}`;
      if (param[1] === 'date') values[name] = '2030-01-07';
      else if (/\/keys$/.test(collection))
        values[name] = (await stack.admin(svc, 'create-key', '--account', accountId)).id as string;
      else if (/\/apps$/.test(collection)) values[name] = '00000000-0000-4000-8000-000000000000';
      else if (/\/webhooks$/.test(collection)) values[name] = await makeWebhook(post, docs[svc], collection);
      else if (makers[collection]) values[name] = await makers[collection](post, docs[svc], collection);
      else throw new Error(`${svc}: no way to make the record ${template} names (add it to makers)`);
      // Only a completed task reopens.
      if (name === 'POST /api/v1/tasks/:id/reopen') await post(`/api/v1/tasks/${values[name]}/complete`, {});
      if (name.endsWith('/carry'))
        [values[name], values[`target ${name}`]] = await carrySource(key, name.startsWith('POST /api/meetings'));
    }
  }
  return values;
}

/**
 * What a carry takes: an open talking point in a series' first meeting (the meeting then
 * COMPLETED when the meeting is what is carried), and the series' next meeting as the target.
 */
async function carrySource(key: string, wholeMeeting: boolean): Promise<[string, string]> {
  const { meetings } = (await send(key, 'POST', '/api/series', series)) as {
    meetings: Array<{ id: string; date: string }>;
  };
  const [first, next] = [...meetings].sort((a, b) => a.date.localeCompare(b.date));
  const itemId = await poster(key)(`/api/meetings/${first!.id}/items`, { kind: 'TALKING_POINT', text: 'carried' });
  if (!wholeMeeting) return [itemId, next!.id];
  const { revision } = await send(key, 'GET', `/api/meetings/${first!.id}`);
  await send(key, 'PATCH', `/api/meetings/${first!.id}`, { baseRevision: revision, status: 'COMPLETED' });
  return [first!.id, next!.id];
}

/** A request with the run's API key; the answer's JSON. */
async function send(key: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${stack.gateway}${path}`, {
    method,
    headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** POST with the run's API key; the answer's record id. */
function poster(key: string): Post {
  return async (path, body) => {
    // tasks answers `{ item }`, a meetings series `{ series, meetings }`, the others the record itself.
    const created = (await send(key, 'POST', path, body)) as {
      id?: string;
      item?: { id: string };
      series?: { id: string };
    };
    const id = created.item?.id ?? created.series?.id ?? created.id;
    if (!id) throw new Error(`POST ${path}: ${JSON.stringify(created)}`);
    return id;
  };
}

/**
 * Fills each request's path parameters from the records made for its operation, and gives the
 * session-only operations (their generated auth is an `apikey`) the session cookie and an allowed
 * Origin, as does a meetings body with privateNotes (sessions only). One script for the
 * documents' own cases and their fuzzed variations alike.
 */
const preRequest = `
const values = JSON.parse(pm.collectionVariables.get('pathValues'));
const name = pm.request.method + ' /' + pm.request.url.path.join('/');
pm.request.url.variables.each((v) => { if (values[name] !== undefined) v.value = values[name]; });
const privateNotes = pm.request.body && pm.request.body.raw && pm.request.body.raw.includes('"privateNotes"');
if (privateNotes) pm.request.authorizeUsing('noauth');
if (privateNotes || (pm.request.auth && pm.request.auth.type === 'apikey')) {
  pm.request.headers.upsert({ key: 'Cookie', value: pm.collectionVariables.get('sessionCookie') });
  pm.request.headers.upsert({ key: 'Origin', value: pm.collectionVariables.get('baseUrl') });
}`;

/**
 * Portman's checks, each turned off only with the reason beside it:
 * - responseTime: off (a 2-core shared machine; latency is the benchmarks' business).
 * - headersPresent: off (Portman expects every documented response header on every answer; ours
 *   are conditional: ETag on single-task answers, Access-Control-Allow-Origin only with Origin).
 * - statusSuccess and schemaValidation on `DELETE /auth/<service>/apps/{id}`: off (an app is connected only through
 *   the whole OAuth flow; the id names none, so the answer is the documented 404).
 * Fuzzing: every body, query and header variation Portman makes (required fields removed,
 * numbers past minimum/maximum, strings past minLength/maxLength) must be a documented 400.
 */
function portmanConfig(
  svc: Service,
  bearerToken: string,
  sessionCookie: string,
  pathValues: Record<string, string>,
  overwrites: unknown[],
) {
  const all = '*::/*';
  const noApp = [`DELETE::/auth/${svc}/apps/{id}`];
  const on = { enabled: true };
  const every = [
    { requiredFields: on, minimumNumberFields: on, maximumNumberFields: on, minLengthFields: on, maxLengthFields: on },
  ];
  return {
    version: 1.0,
    tests: {
      contractTests: [
        { openApiOperation: all, excludeForOperations: noApp, statusSuccess: { enabled: true } },
        { openApiOperation: all, contentType: { enabled: true } },
        { openApiOperation: all, jsonBody: { enabled: true } },
        { openApiOperation: all, excludeForOperations: noApp, schemaValidation: { enabled: true } },
      ],
      variationTests: [
        {
          openApiOperation: all,
          openApiResponse: '400',
          variations: [
            {
              name: 'fuzz',
              fuzzing: [{ requestBody: every }, { requestQueryParams: every }, { requestHeaders: every }],
              tests: {
                contractTests: [
                  { statusCode: { enabled: true, code: 400 } },
                  { contentType: { enabled: true } },
                  { jsonBody: { enabled: true } },
                  { schemaValidation: { enabled: true } },
                ],
              },
            },
          ],
        },
      ],
    },
    overwrites,
    globals: {
      collectionVariables: { bearerToken, sessionCookie, pathValues: JSON.stringify(pathValues) },
      collectionPreRequestScripts: [preRequest],
      stripResponseExamples: true,
    },
  };
}

const REMOVE = Symbol('remove');
type Valid = Record<string, unknown>;
interface Login {
  email: string;
  password: string;
}

/**
 * Portman's generated requests carry random values that satisfy a field's type but not what the
 * field means (a date-time without a zone, a URL that is words, an unknown scope, an id naming
 * no record): the documents' own cases would be refused for the harness's sake. Every operation
 * gets, for each field it has, a valid value by the field's name (REMOVE: leave the optional
 * field out), then a date or date-time by its format. The fuzzed variations start from these.
 */
async function overwritesFor(
  svc: Service,
  key: string,
  made: Record<string, string>,
  login: Login,
): Promise<unknown[]> {
  const doc = docs[svc];
  const valid = await validValues(svc, key, made, login);
  const resolve = (schema: any): any =>
    schema?.$ref
      ? resolve(
          schema.$ref
            .split('/')
            .slice(1)
            .reduce((at: any, part: string) => at[part], doc),
        )
      : schema;
  const pick = (op: string, field: string, schema: any) => {
    const named = valid[`${op} ${field}`] ?? valid[field];
    if (named !== undefined) return named;
    const format = [schema, ...(schema?.anyOf ?? [])].map((s) => s?.format).find(Boolean);
    return format === 'date-time' ? '2030-01-01T09:00:00Z' : format === 'date' ? '2030-01-09' : undefined;
  };
  const entries = (op: string, fields: Array<[string, any]>) =>
    fields
      .map(([key, schema]) => [key, pick(op, key, resolve(schema))] as const)
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => (value === REMOVE ? { key, remove: true } : { key, value, overwrite: true }));
  const overwrites: unknown[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(item)) {
      const op = raw as any;
      if (!op?.responses) continue;
      const name = `${method.toUpperCase()}::${path}`;
      const params = (op.parameters ?? []).map(resolve);
      const from = (where: string) =>
        params.filter((p: any) => p.in === where).map((p: any) => [p.name, p.schema] as [string, any]);
      const body = Object.entries(resolve(op.requestBody?.content?.['application/json']?.schema)?.properties ?? {});
      const overwrite = {
        openApiOperation: name,
        overwriteRequestBody: entries(name, body),
        overwriteRequestQueryParams: entries(name, from('query')),
        overwriteRequestHeaders: entries(name, from('header')),
      };
      if (
        overwrite.overwriteRequestBody.length +
          overwrite.overwriteRequestQueryParams.length +
          overwrite.overwriteRequestHeaders.length >
        0
      )
        overwrites.push(overwrite);
    }
  }
  return overwrites;
}

/** The valid values by field name (`METHOD::/path field` for one operation's own). */
async function validValues(svc: Service, key: string, made: Record<string, string>, login: Login): Promise<Valid> {
  const post = poster(key);
  // A cursor is one the service handed out (a page of one, of at least two records).
  const cursor = async (path: string) => {
    const page = await send(key, 'GET', `${path}?limit=1`);
    return page.nextCursor ?? page.cursor;
  };
  const common: Valid = {
    url: 'http://127.0.0.1:9/contract',
    description: 'contract',
    // Nullable fields are given a value: Portman's length variations change only a string.
    notes: 'contract',
    location: 'contract',
    owner: 'contract',
    keyword: 'contract',
    scopes: [`${svc}:read`],
    timezone: 'Europe/Berlin',
    'X-Timezone': 'Europe/Berlin',
    password: login.password,
    [`POST::/auth/${svc}/signup email`]: `signup-${svc}@example.test`,
    [`POST::/auth/${svc}/login email`]: login.email,
  };
  if (svc === 'tasks') {
    return {
      ...common,
      priority: 'high',
      parentId: await post('/api/v1/tasks', { title: 'contract parent' }),
      assigneeId: 'contract',
      recurrence: 'weekly',
      afterId: await post('/api/v1/tasks', { title: 'contract' }),
      // Any current version: the run does not read ETags first.
      'If-Match': '*',
      rule: 'weekly',
      'GET::/api/v1/tasks cursor': await cursor('/api/v1/tasks'),
      'GET::/api/v1/tasks/changes cursor': await cursor('/api/v1/tasks/changes'),
    };
  }
  if (svc === 'meetings') return { ...common, ...(await meetingsValues(key, made)) };
  const itemId = made['PATCH /api/clipboard/:id/favorite'];
  return {
    ...common,
    // A sealed item: the one kind that takes keyId (and dedupeKey), so their bounds are fuzzed.
    type: 'sealed',
    content: 'Y29udHJhY3Q',
    source: 'api',
    keyId: 'contract-key',
    dedupeKey: 'contract-dedupe',
    // Only what was made before 2000: the records later operations name stay.
    before: '2000-01-01T00:00:00Z',
    cursor: await cursor('/api/clipboard/pull'),
    changes: [{ clientChangeId: randomUUID(), entity: 'item', op: 'favorite', id: itemId, data: { favorite: true } }],
    // The whole set: it keeps the snippet a later DELETE names.
    items: [{ id: made['DELETE /api/snippets/:id'], name: 'contract', content: 'contract', keyword: 'contract' }],
  };
}

async function meetingsValues(key: string, made: Record<string, string>): Promise<Valid> {
  const post = poster(key);
  const personId = await post('/api/people', { name: 'contract' });
  for (const date of ['2030-02-01', '2030-02-02']) await send(key, 'PUT', `/api/notes/${date}`, { today: 'contract' });
  const cursor = async (path: string) =>
    (await send(key, 'GET', `${path}${path.includes('?') ? '&' : '?'}limit=1`)).nextCursor;
  const meetingId = await makers['/api/meetings']!(post, docs.meetings, '');
  const itemIds = [];
  for (const text of ['first', 'second'])
    itemIds.unshift(await post(`/api/meetings/${meetingId}/items`, { kind: 'TALKING_POINT', text }));
  const itemsOf = made['POST /api/meetings/:id/items'];
  return {
    email: 'person@example.test',
    seriesId: await post('/api/series', series),
    'POST::/api/meetings date': '2030-01-08',
    cadence: 'WEEKLY',
    weekday: 1,
    monthDay: REMOVE,
    personId,
    participantIds: [personId],
    parentId: await post(`/api/meetings/${itemsOf}/items`, { kind: 'TALKING_POINT', text: 'parent' }),
    // The revision a made meeting has; a note's first write takes none.
    'PATCH::/api/meetings/{id} baseRevision': 1,
    // A move the document allows from SCHEDULED (a random one, such as DRAFT, is its 409).
    'PATCH::/api/meetings/{id} status': 'IN_PROGRESS',
    baseRevision: REMOVE,
    // Sessions only: the run sends a body with privateNotes with the session (preRequest).
    privateNotes: 'contract',
    'POST::/api/meetings/{id}/carry targetMeetingId': made['target POST /api/meetings/:id/carry'],
    'POST::/api/items/{id}/carry targetMeetingId': made['target POST /api/items/:id/carry'],
    parkingLot: false,
    meetingId,
    itemIds,
    // Changes since an instant, with a cursor of that listing.
    'GET::/api/notes changedSince': '2000-01-01T00:00:00Z',
    'GET::/api/notes cursor': await cursor('/api/notes?changedSince=2000-01-01T00:00:00Z'),
    'GET::/api/people cursor': await cursor('/api/people'),
    'GET::/api/series cursor': await cursor('/api/series'),
    'GET::/api/meetings cursor': await cursor('/api/meetings'),
    'GET::/api/changes cursor': await cursor('/api/changes'),
  };
}
