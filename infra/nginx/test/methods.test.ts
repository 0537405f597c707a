import { connect } from 'node:net';
import { SERVICES, declared, startStack, type Service, type Stack } from './stack.js';

/**
 * What the gateway and the services answer for methods a path does not have and for requests
 * nginx refuses itself, per path family of every declared service: always JSON, in the envelope
 * of the service whose path it is, with an `Allow` naming the methods the path really has.
 */

let stack: Stack;
/** Each service's OpenAPI paths and the methods each has, from its published document. */
const documented = {} as Record<Service, Map<string, string[]>>;

beforeAll(async () => {
  stack = await startStack();
  for (const svc of SERVICES) {
    const doc = (await (await fetch(`${stack.gateway}/openapi/${svc}.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
    };
    documented[svc] = new Map(
      Object.entries(doc.paths).map(([path, item]) => [
        path,
        Object.keys(item)
          .filter((k) => ['get', 'put', 'post', 'delete', 'patch'].includes(k))
          .map((k) => k.toUpperCase()),
      ]),
    );
  }
}, 60000);
afterAll(() => stack?.stop());

interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** One request written by hand (any method, any target), on its own connection. */
function raw(method: string, target: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  const { hostname, port } = new URL(stack.gateway);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname);
    const chunks: Buffer[] = [];
    socket.setTimeout(10000, () => socket.destroy(new Error(`${method} ${target}: no answer`)));
    // Parsed as soon as it is complete: nginx may hold the connection open after refusing a body.
    const parse = (): RawResponse | undefined => {
      const text = Buffer.concat(chunks).toString('latin1');
      const end = text.indexOf('\r\n\r\n');
      if (end < 0) return undefined;
      const [statusLine = '', ...lines] = text.slice(0, end).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      const status = Number(statusLine.split(' ')[1]);
      let body = text.slice(end + 4);
      if (headers['transfer-encoding'] === 'chunked') {
        let out = '';
        for (let at = 0; ;) {
          const eol = body.indexOf('\r\n', at);
          if (eol < 0) return undefined;
          const size = parseInt(body.slice(at, eol), 16);
          if (size === 0) break;
          if (body.length < eol + 2 + size) return undefined;
          out += body.slice(eol + 2, eol + 2 + size);
          at = eol + 2 + size + 2;
        }
        body = out;
      } else if (headers['content-length'] !== undefined) {
        if (body.length < Number(headers['content-length'])) return undefined;
      } else if (status !== 204 && status !== 304 && !socket.closed) {
        return undefined;
      }
      return { status, headers, body };
    };
    const done = () => {
      const res = parse();
      if (!res) return false;
      socket.destroy();
      resolve(res);
      return true;
    };
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      done();
    });
    socket.on('error', reject);
    socket.on(
      'close',
      () => done() || reject(new Error(`${method} ${target}: connection closed before a whole answer`)),
    );
    const lines = [
      `${method} ${target} HTTP/1.1`,
      'Host: 127.0.0.1',
      'Connection: close',
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    ];
    socket.write(`${lines.join('\r\n')}\r\n\r\n`);
  });
}

/** A JSON error body in `service`'s envelope (the rich one carries `code`). */
function expectEnvelope(service: Service | undefined, res: RawResponse, code: string): void {
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = JSON.parse(res.body) as { error: unknown };
  if (service && declared(service).envelope === 'simple') expect(body).toEqual({ error: expect.any(String) });
  else
    expect(body).toEqual({
      error: expect.objectContaining({ code, message: expect.any(String), requestId: expect.any(String) }),
    });
}

const allowOf = (res: RawResponse) =>
  new Set(
    (res.headers.allow ?? '')
      .split(',')
      .map((m) => m.trim())
      .filter(Boolean),
  );

/** The methods a path answers: its document's, HEAD with GET, and OPTIONS. */
const expectedAllow = (methods: string[]) =>
  new Set([...methods, ...(methods.includes('GET') ? ['HEAD'] : []), 'OPTIONS']);

/** Every documented path of a service that lies in one of its declared families, `{x}` filled in. */
function familyPaths(service: Service): Array<[string, string[]]> {
  const families = declared(service).paths.families;
  return [...documented[service]]
    .filter(([path]) => families.some((f) => path === f || path.startsWith(`${f}/`)))
    .map(([path, methods]) => [path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000'), methods]);
}

describe('a method a path does not have', () => {
  // TRACE and CONNECT nginx refuses itself; FOO no service's HTTP parser knows; PROPFIND one does.
  it.each(SERVICES)(
    "is a JSON 405 in the %s envelope with Allow naming the path's own methods, on every path of its families",
    async (svc) => {
      const paths = familyPaths(svc);
      expect(paths.length).toBeGreaterThan(0);
      for (const [path, methods] of paths) {
        for (const method of ['TRACE', 'CONNECT', 'FOO', 'PROPFIND']) {
          const res = await raw(method, path);
          expect(`${method} ${path} ${res.status}`).toBe(`${method} ${path} 405`);
          expectEnvelope(svc, res, 'method_not_allowed');
          expect([method, path, allowOf(res)]).toEqual([method, path, expectedAllow(methods)]);
        }
      }
    },
    120000,
  );

  it.each(SERVICES)(
    "on a documented %s path is a 405 naming that path's methods, not those of a neighbouring /{id} route",
    async (svc) => {
      for (const [path, methods] of familyPaths(svc)) {
        const missing = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].find((m) => !methods.includes(m));
        if (!missing) continue;
        const res = await raw(missing, path, { 'Content-Length': '0' });
        expect(`${missing} ${path} ${res.status}`).toBe(`${missing} ${path} 405`);
        expectEnvelope(svc, res, 'method_not_allowed');
        expect([missing, path, allowOf(res)]).toEqual([missing, path, expectedAllow(methods)]);
      }
    },
    120000,
  );

  it("on the gateway's own /docs page is a JSON 405 with Allow: GET, HEAD", async () => {
    for (const method of ['TRACE', 'POST', 'FOO']) {
      const res = await raw(method, '/docs', { 'Content-Length': '0' });
      expect(res.status).toBe(405);
      expectEnvelope(undefined, res, 'method_not_allowed');
      expect(allowOf(res)).toEqual(new Set(['GET', 'HEAD']));
    }
  });

  it("on a path of no service is the gateway's JSON 404", async () => {
    for (const method of ['TRACE', 'FOO', 'PUT']) {
      const res = await raw(method, '/nothing/here', { 'Content-Length': '0' });
      expect(res.status).toBe(404);
      expectEnvelope(undefined, res, 'route_not_found');
    }
  });
});

describe('OPTIONS without a CORS preflight', () => {
  it.each(SERVICES)("answers each %s path with an Allow of that path's own methods", async (svc) => {
    for (const [path, methods] of familyPaths(svc)) {
      const res = await raw('OPTIONS', path);
      expect(`${path} ${res.status}`).toBe(`${path} 204`);
      expect([path, allowOf(res)]).toEqual([path, expectedAllow(methods)]);
    }
  });

  it('leaves CORS preflights as they were: 204 with the CORS headers', async () => {
    for (const svc of SERVICES) {
      const [path] = familyPaths(svc)[0]!;
      const res = await raw('OPTIONS', path, {
        Origin: 'https://elsewhere.example',
        'Access-Control-Request-Method': 'POST',
      });
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('*');
      expect(res.headers['access-control-allow-methods']).toContain('POST');
    }
  });
});

/** Paths of each service's every kind of gateway location: its families, sign-in, account page, reference, document. */
function locationPaths(service: Service): string[] {
  return [
    ...declared(service).paths.families,
    `/auth/${service}/me`,
    `/account/${service}`,
    `/docs/${service}`,
    `/openapi/${service}.json`,
  ];
}

describe("the gateway's own errors", () => {
  it.each(SERVICES)(
    "are in the %s envelope on its paths: 400 for %%00, 414 for a URI past 8 KB, 413 for a body past the gateway's limit",
    async (svc) => {
      for (const path of locationPaths(svc)) {
        // Below the path (its document's path has nothing below it: that is no service's).
        if (!path.startsWith('/openapi/')) {
          const nul = await raw('GET', `${path}/%00`);
          expect(`${path} ${nul.status}`).toBe(`${path} 400`);
          expectEnvelope(svc, nul, 'bad_request');
        }
        for (const length of [9000, 20000]) {
          const long = await raw('GET', `${path}?q=${'a'.repeat(length)}`);
          expect(`${path} ${length} ${long.status}`).toBe(`${path} ${length} 414`);
          expectEnvelope(svc, long, 'uri_too_long');
        }
        const big = await raw('POST', path, {
          'Content-Length': String(3 * 1024 * 1024),
          'Content-Type': 'application/json',
        });
        expect(`${path} ${big.status}`).toBe(`${path} 413`);
        expectEnvelope(svc, big, 'payload_too_large');
      }
    },
  );

  it("accept a URI of 8 KB (a long cursor is the service's to judge)", async () => {
    for (const svc of SERVICES) {
      const path = declared(svc).paths.families[0]!;
      const prefix = `${path}?cursor=`;
      const res = await raw('GET', `${prefix}${'a'.repeat(8192 - prefix.length)}`);
      expect(`${path} ${res.status}`).not.toBe(`${path} 414`);
      expect(res.status).toBeLessThan(500);
    }
  });

  it('keep the default envelope on paths of no service', async () => {
    const nul = await raw('GET', '/nothing/%00');
    expect(nul.status).toBe(400);
    expectEnvelope(undefined, nul, 'bad_request');
    const long = await raw('GET', `/nothing?q=${'a'.repeat(9000)}`);
    expect(long.status).toBe(414);
    expectEnvelope(undefined, long, 'uri_too_long');
  });
});
