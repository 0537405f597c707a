import { spawnSync } from 'node:child_process';
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
    // point at a closed local port.
    Object.fromEntries(SERVICES.map((svc) => [svc, { WEBHOOK_ALLOW_PRIVATE: '1', RATE_LIMIT_PER_MINUTE: '1000000', RATE_LIMIT_READS_PER_MINUTE: '1000000', RATE_LIMIT_WRITES_PER_MINUTE: '1000000', RATE_LIMIT_NETWORK_PER_MINUTE: '1000000' }])),
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
const concrete = (template: string) => template.replace(/\{date\}/g, '2030-01-01').replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');

describe('the OpenAPI documents and the gateway', () => {
  it('lists only paths the gateway routes to the service (none it answers with its own 404)', async () => {
    const unrouted: string[] = [];
    for (const svc of SERVICES) {
      for (const [template, item] of Object.entries(docs[svc].paths)) {
        const method = Object.keys(item).find((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))!;
        const res = await fetch(`${stack.gateway}${concrete(template)}`, { method: method.toUpperCase(), headers: { Authorization: `Bearer ${keys[svc]}` } });
        // The gateway's own answer for a path it does not route: 404 `route_not_found`. Any other
        // answer is left unread (a change stream would stay open for an hour).
        if (res.status !== 404) await res.body?.cancel();
        else if ((await res.text()).includes('"route_not_found"')) unrouted.push(`${svc}: ${method.toUpperCase()} ${template}`);
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
          const res = await fetch(`${stack.gateway}${concrete(template)}`, { method: method.toUpperCase(), headers: { Authorization: `Bearer ${keys[svc]}` } });
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
  it.each(SERVICES.map((svc) => [svc]))('%s: every case answers as its document says', async (svc) => {
    const dir = mkdtempSync(join(tmpdir(), `contract-${svc}-`));
    const doc = join(dir, 'openapi.json');
    writeFileSync(doc, JSON.stringify(withoutStreams(docs[svc])));
    const { accountId } = await stack.admin(svc, 'create-account', '--email', `portman-${svc}@example.test`);
    const key = (await stack.admin(svc, 'create-key', '--account', accountId)).key as string;
    const cookie = (await stack.admin(svc, 'create-session', '--account', accountId)).cookie as string;
    const pathValues = await recordsFor(svc, accountId, key);
    writeFileSync(join(dir, 'portman.json'), JSON.stringify(portmanConfig(svc, key, cookie, pathValues)));
    const npx = (args: string[]) => spawnSync('npx', ['--yes', ...args], { cwd: dir, encoding: 'utf8', timeout: 600_000 });
    // Portman writes the collection (its base URL the gateway); newman runs it and writes the report.
    const made = npx(['-p', '@apideck/portman@1.33.0', '-p', 'tslib@2.8.1', 'portman', '-l', doc, '-b', stack.gateway, '-o', join(dir, 'collection.json'),
      '--portmanConfigFile', join(dir, 'portman.json'), '--syncPostman', 'false', '--includeTests', 'true']);
    const run = npx(['-p', 'newman@6.2.2', 'newman', 'run', join(dir, 'collection.json'),
      // A bound on each request all the same: a hung answer fails its case, not the whole run.
      '--timeout-request', '10000', '-r', 'json', '--reporter-json-export', join(dir, 'report.json')]);
    writeFileSync(join(dir, 'portman.log'), [made.stdout, made.stderr, run.stdout, run.stderr].join('\n'));
    const report = JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as NewmanReport;
    const stats = report.run.stats;
    const failures = report.run.failures.map((f) => `${f.source?.name ?? '?'}: ${f.error.test ?? ''} ${f.error.message}`.slice(0, 300));
    writeFileSync(join(dir, 'summary.txt'), `${svc}: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${failures.length} failures\n${failures.join('\n')}\n`);
    process.stdout.write(`${svc}: ${stats.requests.total} requests, ${stats.assertions.total} assertions, ${stats.assertions.failed} failed (${dir}/summary.txt)\n`);
    expect({ exit: run.status === null ? run.error?.message : 'ran', failures }).toEqual({ exit: 'ran', failures: [] });
  }, 900000);
});

interface NewmanReport {
  run: {
    stats: { requests: { total: number }; assertions: { total: number; failed: number } };
    failures: Array<{ source?: { name?: string }; error: { test?: string; message: string } }>;
  };
}

type Doc = (typeof docs)[Service];

/**
 * The document without its `text/event-stream` operations (the change streams): a stream stays
 * open for an hour; the stream suites (streams.test.ts and each app's own) cover it.
 */
function withoutStreams(doc: Doc): Doc {
  const isStream = (op: any) => Object.values(op?.responses ?? {}).some((r: any) => r?.content?.['text/event-stream']);
  const paths = Object.fromEntries(Object.entries(doc.paths)
    .map(([path, item]) => [path, Object.fromEntries(Object.entries(item).filter(([, op]) => !isStream(op)))] as const)
    .filter(([, item]) => Object.keys(item).some((m) => ['get', 'post', 'put', 'patch', 'delete'].includes(m))));
  return { ...doc, paths };
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
  '/api/meetings': async (post) => post('/api/meetings', { seriesId: await post('/api/series', series), date: '2030-01-07' }),
  '/api/items': async (post) => post(`/api/meetings/${await makers['/api/meetings']!(post, {} as Doc, '')}/items`, { kind: 'ACTION', text: 'contract' }),
  '/api/clipboard': (post) => post('/api/clipboard', { type: 'text', content: 'contract', source: 'api' }),
  '/api/snippets': (post) => post('/api/snippets', { name: 'contract', content: 'contract' }),
};
const series = { title: 'contract', cadence: 'WEEKLY', weekday: 1, startTime: '09:00', durationMinutes: 30, timezone: 'UTC', startDate: '2030-01-07' };

/** A subscription to the first event its document lists, at an address the run never reads. */
async function makeWebhook(post: Post, doc: Doc, collection: string): Promise<string> {
  const events = (schema: any): string[] | undefined => schema?.$ref
    ? events(schema.$ref.split('/').slice(1).reduce((at: any, part: string) => at[part], doc))
    : schema?.properties?.events?.items?.enum ?? [...(schema?.oneOf ?? []), ...(schema?.allOf ?? [])].map(events).find(Boolean);
  const schema = events((doc.paths[collection]!.post as any).requestBody.content['application/json'].schema)!;
  return post(collection, { url: 'http://127.0.0.1:9/contract', events: [schema[0]] });
}

/**
 * A real record for every operation whose path has a parameter (one each, so a DELETE takes
 * nothing from the operations after it), keyed `METHOD /path/:param` as the collection spells it.
 */
async function recordsFor(svc: Service, accountId: string, key: string): Promise<Record<string, string>> {
  const post: Post = async (path, body) => {
    const res = await fetch(`${stack.gateway}${path}`, { method: 'POST', headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
    // tasks answers `{ item }`, a meetings series `{ series, meetings }`, the others the record itself.
    const created = (await res.json()) as { id?: string; item?: { id: string }; series?: { id: string } };
    const id = created.item?.id ?? created.series?.id ?? created.id;
    if (!id) throw new Error(`POST ${path}: ${res.status} ${JSON.stringify(created)}`);
    return id;
  };
  const values: Record<string, string> = {};
  for (const [template, item] of Object.entries(docs[svc].paths)) {
    const param = /\{(\w+)\}/.exec(template);
    if (!param) continue;
    const collection = template.slice(0, param.index - 1);
    for (const method of Object.keys(item)) {
      const name = `${method.toUpperCase()} ${template.replace(/\{(\w+)\}/g, ':$1')}`;
      if (param[1] === 'date') values[name] = '2030-01-07';
      else if (/\/keys$/.test(collection)) values[name] = (await stack.admin(svc, 'create-key', '--account', accountId)).id as string;
      else if (/\/apps$/.test(collection)) values[name] = '00000000-0000-4000-8000-000000000000';
      else if (/\/webhooks$/.test(collection)) values[name] = await makeWebhook(post, docs[svc], collection);
      else if (makers[collection]) values[name] = await makers[collection](post, docs[svc], collection);
      else throw new Error(`${svc}: no way to make the record ${template} names (add it to makers)`);
    }
  }
  return values;
}

/**
 * Fills each request's path parameters from the records made for its operation, and gives the
 * session-only operations (their generated auth is an `apikey`) the session cookie and an allowed
 * Origin. One script for the documents' own cases and their fuzzed variations alike.
 */
const preRequest = `
const values = JSON.parse(pm.collectionVariables.get('pathValues'));
const name = pm.request.method + ' /' + pm.request.url.path.join('/');
pm.request.url.variables.each((v) => { if (values[name] !== undefined) v.value = values[name]; });
if (pm.request.auth && pm.request.auth.type === 'apikey') {
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
function portmanConfig(svc: Service, bearerToken: string, sessionCookie: string, pathValues: Record<string, string>) {
  const all = '*::/*';
  const noApp = [`DELETE::/auth/${svc}/apps/{id}`];
  const on = { enabled: true };
  const every = [{ requiredFields: on, minimumNumberFields: on, maximumNumberFields: on, minLengthFields: on, maxLengthFields: on }];
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
          variations: [{
            name: 'fuzz',
            fuzzing: [
              { requestBody: every },
              { requestQueryParams: every },
              { requestHeaders: every },
            ],
            tests: { contractTests: [{ statusCode: { enabled: true, code: 400 } }, { contentType: { enabled: true } }, { jsonBody: { enabled: true } }, { schemaValidation: { enabled: true } }] },
          }],
        },
      ],
    },
    globals: {
      collectionVariables: { bearerToken, sessionCookie, pathValues: JSON.stringify(pathValues) },
      collectionPreRequestScripts: [preRequest],
      stripResponseExamples: true,
    },
  };
}
