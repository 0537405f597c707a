import { upper, type Declared } from './declarations.js';

/**
 * The per-service parts of infra/nginx/templates/gateway.conf.template (its fixed parts are the
 * template's): upstreams, each service's locations, the flood guard of a service with a
 * network-level cap, and the error pages of each envelope in use.
 */

/** Where a location sits: what it passes, and so which of the shared lines it takes. */
type Kind = 'api' | 'write' | 'stream' | 'openapi' | 'account' | 'mcp' | 'docs';

const guarded = (svc: Declared): boolean => svc.limits.networkCap?.gatewayGuard !== undefined;

/**
 * The request limits of one location: the one place a per-location limit is added (the flood
 * guard covers a guarded service's API, its writes and its stream; the MCP guard every MCP server).
 */
function limits(svc: Declared, kind: Kind): string[] {
  if (guarded(svc) && (kind === 'api' || kind === 'write' || kind === 'stream')) {
    return [
      `limit_req zone=${svc.name}_guard burst=\${${upper(svc)}_GUARD_BURST} nodelay;`,
      `error_page 429 = @${svc.name}_429;`,
    ];
  }
  // Every MCP server, per client address (the zone is keyed for /mcp/ paths only, so the OAuth
  // paths sharing the location are not counted).
  if (kind === 'mcp')
    return ['limit_req zone=mcp_guard burst=${MCP_GUARD_BURST} nodelay;', 'error_page 429 = @mcp_429;'];
  return [];
}

/** The JSON answers, in the service's envelope, for an upstream down or late, a body too large, and the rest nginx makes itself. */
function errorPages(svc: Declared): string[] {
  const env = svc.envelope;
  // Any other status nginx makes itself here (a malformed body, a slow client, its own fault).
  return [
    `error_page 502 503 = @${env}_502;`,
    `error_page 504 = @${env}_504;`,
    `error_page 413 = @${env}_413;`,
    `error_page ${GENERIC_STATUSES} ${ERROR_PAGE};`,
  ];
}

/** The URI of the gateway's one JSON page for the statuses it makes itself, in the envelope of the request's path. */
const ERROR_PAGE = '/__gateway/error';
const GENERIC_STATUSES = '400 408 411 500 501 505';

/** What a kind of location does before its limits. */
const opening: Record<Kind, (svc: Declared) => string[]> = {
  api: (svc) => [`error_page 418 = @${svc.name}_write;`, 'recursive_error_pages on;', 'if ($gw_write) { return 418; }'],
  write: () => ['proxy_next_upstream off;'],
  stream: () => ['proxy_buffering off;', 'proxy_read_timeout 3600s;', 'proxy_pass_header X-Accel-Buffering;'],
  openapi: () => [],
  account: () => [],
  mcp: () => [],
  docs: () => [],
};

/**
 * Each location's match as a pattern of the request line (`$request`: method, target, protocol),
 * so that errors nginx raises before or without a location (a malformed URI, TRACE, a URI too
 * long) are answered in the envelope of the service whose path it is.
 */
function requestPattern(match: string): string {
  const path = match.startsWith('= ') ? `${escape(match.slice(2))}$` : match.replace(/^~ \^/, '');
  // The path ends where the query or the protocol begins.
  return `~^[A-Z_-]+ (https?://[^/ ]*)?${path.replace(/(?<!\\)\$/g, '(?=[? ])')}`;
}

function location(match: string, svc: Declared, kind: Kind): string[] {
  const target = kind === 'openapi' ? `http://${svc.name}_service/openapi.json` : `http://${svc.name}_service`;
  const body = [...opening[kind](svc), ...limits(svc, kind), ...errorPages(svc), `proxy_pass ${target};`];
  return [`    location ${match} {`, ...body.map((line) => `        ${line}`), '    }'];
}

const escape = (path: string): string => path.replace(/[.]/g, '\\.');

/**
 * A service's path families as regular expressions, one per parent: `/api/notes` and
 * `/api/people` become `^/api/(notes|people)(/|$)`, each matching itself and what lies under it.
 */
function familyMatches(svc: Declared): string[] {
  const byParent = new Map<string, string[]>();
  for (const family of svc.paths.families) {
    const cut = family.lastIndexOf('/');
    const parent = family.slice(0, cut);
    byParent.set(parent, [...(byParent.get(parent) ?? []), family.slice(cut + 1)]);
  }
  return [...byParent].map(([parent, names]) =>
    names.length === 1
      ? `~ ^${escape(parent)}/${escape(names[0]!)}(/|$)`
      : `~ ^${escape(parent)}/(${names.map(escape).join('|')})(/|$)`,
  );
}

/** Every location match of a service that takes requests (its writes' named location aside), by kind. */
function matchesOf(svc: Declared): Record<Exclude<Kind, 'write'>, string[]> {
  const n = svc.name;
  return {
    api: familyMatches(svc),
    stream: svc.paths.streams.map((stream) => `= ${stream}`),
    openapi: [`= /openapi/${n}.json`],
    account: [`~ ^/(auth/${n}/|account/${n}(/|$))`],
    mcp: [
      `~ ^/(mcp/${n}$|oauth/${n}/|\\.well-known/oauth-authorization-server/oauth/${n}$|\\.well-known/oauth-protected-resource/mcp/${n}$)`,
    ],
    docs: [`~ ^/docs/${n}(/|$)`],
  };
}

/**
 * Which service's path a request is on, from its request line: the first of the map's patterns
 * that matches; `gateway` for the gateway's own /docs page, empty for no one's.
 */
function serviceMap(services: readonly Declared[]): string {
  const lines = services.flatMap((svc) =>
    Object.values(matchesOf(svc))
      .flat()
      .map((match) => `    "${requestPattern(match)}" ${svc.name};`),
  );
  return [
    'map $request $gw_service {',
    '    default "";',
    `    "${requestPattern('= /docs')}" gateway;`,
    ...lines,
    '}',
  ].join('\n');
}

/** Each service's envelope by its name (the gateway's own answers and paths of no service: rich). */
function envelopeMap(services: readonly Declared[]): string {
  return [
    'map $gw_service $gw_envelope {',
    '    default rich;',
    ...services.map((svc) => `    ${svc.name} ${svc.envelope};`),
    '}',
  ].join('\n');
}

function upstreams(services: readonly Declared[]): string {
  return services
    .flatMap((svc) => [
      `upstream ${svc.name}_service {`,
      `    zone ${svc.name}_service 64k;`,
      `    server \${${upper(svc)}_UPSTREAM} max_fails=1 fail_timeout=5s;`,
      '    keepalive 64;',
      '    keepalive_timeout 60s;',
      '}',
    ])
    .join('\n');
}

function guardZones(services: readonly Declared[]): string {
  return services
    .filter(guarded)
    .flatMap((svc) => [
      `# The ${svc.name} network-level cap (${svc.limits.networkCap!.perMinute} API requests per minute per client address) is counted`,
      `# by the ${svc.name} service in Redis, so it holds across its instances and across gateway`,
      `# replicas. This per-gateway guard is looser (${upper(svc)}_GUARD_RATE and _BURST); it only stops`,
      '# a flood before it reaches Node.',
      `limit_req_zone $binary_remote_addr zone=${svc.name}_guard:10m rate=\${${upper(svc)}_GUARD_RATE};`,
    ])
    .join('\n');
}

function locations(services: readonly Declared[]): string {
  const lines = [
    "    # Each service's writes (any method but GET and HEAD) go to a named location of the same",
    '    # service that never passes a request to a second instance. The 418 is internal (named',
    '    # locations keep the method, URI and body); recursive_error_pages lets the error pages of',
    '    # the named location apply after it.',
  ];
  for (const svc of services) {
    lines.push(
      ...matchesOf(svc).api.flatMap((match) => location(match, svc, 'api')),
      ...location(`@${svc.name}_write`, svc, 'write'),
      '',
    );
  }
  const each = (kind: Exclude<Kind, 'api' | 'write'>) =>
    services.flatMap((svc) => matchesOf(svc)[kind].flatMap((match) => location(match, svc, kind)));
  lines.push(
    '    # Live change streams (Server-Sent Events): passed as they come (no buffering here, and',
    '    # X-Accel-Buffering passed on so a proxy in front does not buffer either) and held up to an',
    '    # hour, after which the client resumes with Last-Event-ID. GET only: a refused or dead',
    "    # instance's stream is opened on another before any byte went out.",
    ...each('stream'),
    '',
    ...each('openapi'),
    '',
    "    # Each service's sign-in routes (/auth/<service>/...) and account page with its assets",
    '    # (/account/<service>, /account/<service>/...).',
    ...each('account'),
    '',
    "    # Each service's MCP server (/mcp/<service>, Streamable HTTP; POST only, so never retried on",
    '    # another instance once sent), its OAuth authorization server (/oauth/<service>/...) and their',
    '    # two metadata documents (RFC 8414, RFC 9728).',
    ...each('mcp'),
    '',
    ...docsIndex(services),
    ...each('docs'),
  );
  return lines.join('\n');
}

function docsIndex(services: readonly Declared[]): string[] {
  return [
    '    # API reference pages. /docs is this small page, served by nginx itself (text/html, where the',
    "    # rest of the gateway defaults to JSON); /docs/<service>/... is that service's Swagger UI page,",
    '    # its assets and its document, all served by the service from its npm dependencies.',
    '    location = /docs {',
    '        if ($request_method !~ ^(GET|HEAD)$) { return 405; }',
    '        default_type text/html;',
    '        charset utf-8;',
    '        add_header X-Request-Id $gw_request_id always;',
    `        add_header Content-Security-Policy "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'" always;`,
    '        add_header X-Content-Type-Options nosniff always;',
    "        return 200 '<!doctype html>",
    '<html lang="en">',
    '<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>API reference</title><link rel="icon" href="data:,">',
    '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:40rem;margin:3rem auto;padding:0 1rem}li{margin:.5rem 0}</style></head>',
    '<body>',
    '<h1>API reference</h1>',
    '<ul>',
    ...services.map(
      (svc) =>
        `<li><a href="/docs/${svc.name}">${svc.title} API</a> (<a href="/openapi/${svc.name}.json">OpenAPI document</a>)</li>`,
    ),
    '</ul>',
    '</body>',
    '</html>',
    "';",
    '    }',
  ];
}

/** A JSON answer of the gateway's own, in a named location. */
function answer(name: string, status: number, body: string, retryAfter?: number): string[] {
  return [
    `    location @${name} {`,
    '        add_header X-Request-Id $gw_request_id always;',
    ...(retryAfter === undefined ? [] : [`        add_header Retry-After ${retryAfter} always;`]),
    `        return ${status} '${body}';`,
    '    }',
  ];
}

const rich = (code: string, message: string): string =>
  `{"error":{"code":"${code}","message":"${message}","requestId":"$gw_request_id"}}`;

/**
 * The gateway's page for the statuses it makes itself (error_page without `=` keeps the status):
 * its code and message by status, in the envelope of the request's path.
 */
function genericErrorPage(envelopes: ReadonlySet<string>): string[] {
  return [
    `    location = ${ERROR_PAGE} {`,
    '        internal;',
    '        add_header X-Request-Id $gw_request_id always;',
    ...(envelopes.has('simple')
      ? [
          '        if ($gw_envelope = simple) {',
          '            add_header X-Request-Id $gw_request_id always;',
          `            return 200 '{"error":"$gw_error_message"}';`,
          '        }',
        ]
      : []),
    `        return 200 '${rich('$gw_error_code', '$gw_error_message')}';`,
    '    }',
  ];
}

/**
 * A method nginx refuses itself (TRACE, CONNECT) or no service knows (anything but the seven it
 * passes on): the service whose path it is answers it, asked with TRACE, which no path has, so
 * its 405 carries its envelope and the path's own Allow. The gateway's /docs page allows GET and
 * HEAD; a path of no service is the usual 404.
 */
function methodLocation(envelopes: ReadonlySet<string>): string[] {
  return [
    '    location @gw_method {',
    `        error_page 502 503 504 ${ERROR_PAGE};`,
    '        if ($gw_service = "") {',
    '            add_header X-Request-Id $gw_request_id always;',
    `            return 404 '${rich('route_not_found', 'No such route')}';`,
    '        }',
    '        if ($gw_service = gateway) {',
    '            add_header X-Request-Id $gw_request_id always;',
    '            add_header Allow "GET, HEAD" always;',
    `            return 405 '${rich('method_not_allowed', 'This path allows GET and HEAD')}';`,
    '        }',
    '        proxy_method TRACE;',
    '        proxy_pass_request_body off;',
    '        proxy_pass http://${gw_service}_service;',
    '    }',
    ...genericErrorPage(envelopes),
  ];
}

function errorPageLocations(services: readonly Declared[]): string {
  const envelopes = new Set(services.map((svc) => svc.envelope));
  return [
    ...methodLocation(envelopes),
    ...services
      .filter(guarded)
      .flatMap((svc) =>
        answer(`${svc.name}_429`, 429, rich('rate_limited', 'Too many requests from this address; retry later'), 1),
      ),
    ...answer(
      'mcp_429',
      429,
      '{"jsonrpc":"2.0","error":{"code":-32000,"message":"Too many requests from this address; retry later"},"id":null}',
      1,
    ),
    ...(envelopes.has('rich')
      ? [
          ...answer('rich_502', 502, rich('upstream_unavailable', 'The service is unavailable; retry later'), 5),
          ...answer('rich_504', 504, rich('upstream_timeout', 'The service did not answer in time')),
          ...answer('rich_413', 413, rich('payload_too_large', 'Request body is too large')),
        ]
      : []),
    ...(envelopes.has('simple')
      ? [
          ...answer('simple_502', 502, '{"error":"The service is unavailable; retry later"}', 5),
          ...answer('simple_504', 504, '{"error":"The service did not answer in time"}'),
          ...answer('simple_413', 413, '{"error":"Request body is too large"}'),
        ]
      : []),
  ].join('\n');
}

/** The values of the gateway template's per-service placeholders. */
export function gatewayValues(services: readonly Declared[]): Record<string, string> {
  return {
    upstreamVariables: services.map((svc) => `${upper(svc)}_UPSTREAM`).join(', '),
    guardVariables: services
      .filter(guarded)
      .map((svc) => {
        const guard = svc.limits.networkCap!.gatewayGuard!;
        return `#   ${upper(svc)}_GUARD_RATE (${guard.rate}) and ${upper(svc)}_GUARD_BURST (${guard.burst}), a local flood guard for ${svc.name};`;
      })
      .join('\n'),
    guardZones: guardZones(services),
    serviceMaps: `${serviceMap(services)}\n${envelopeMap(services)}`,
    upstreams: upstreams(services),
    locations: locations(services),
    errorPages: errorPageLocations(services),
  };
}
