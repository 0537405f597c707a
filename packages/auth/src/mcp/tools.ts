/*
 * MCP tools generated from a service's OpenAPI document: one tool per operation an API key may
 * call, named by its operationId. Nothing here knows a service: a new documented operation
 * becomes a tool by being documented, with the scopes its `apiKey` security requirement lists.
 */

type Schema = Record<string, unknown>;

interface Parameter {
  name: string;
  in: 'path' | 'query' | 'header' | 'cookie';
  required?: boolean;
  description?: string;
  schema?: Schema;
  /** A cutoff instant the MCP server fills with the time the user was asked, when a confirmed call leaves it out. */
  'x-mcp-asked-at'?: boolean;
}

interface Operation {
  operationId?: string;
  summary?: string;
  description?: string;
  security?: Array<Record<string, string[]>>;
  parameters?: Parameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: Schema }> };
  responses?: Record<string, { content?: Record<string, unknown> }>;
}

/** An operation whose answer is a stream of Server-Sent Events: a tool call could never return it. */
function streams(op: Operation): boolean {
  const ok = Object.entries(op.responses ?? {}).find(([status]) => status.startsWith('2'))?.[1];
  const types = Object.keys(ok?.content ?? {});
  return types.length > 0 && types.every((t) => t === 'text/event-stream');
}

/** The header parameters a tool takes as arguments, by header name (lower case). */
const HEADER_ARGUMENTS: Record<string, string> = { 'idempotency-key': 'idempotencyKey', 'if-match': 'ifMatch' };
const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;
/** Paths that are never tools, whatever their security says: sign-in, OAuth and MCP itself. */
const NEVER = [/^\/auth\//, /^\/oauth\//, /^\/mcp\//, /^\/\.well-known\//];

/** How one tool's arguments become a REST request. */
interface ToolRoute {
  method: string;
  /** The OpenAPI path template, e.g. `/api/v1/tasks/{id}`. */
  path: string;
  pathArgs: string[];
  queryArgs: string[];
  /** Argument name -> header name. */
  headerArgs: Record<string, string>;
  /** `properties`: the body's properties are top-level arguments; `whole`: one `body` argument. */
  body: 'none' | 'properties' | 'whole';
  bodyArgs: string[];
  /** Whether the operation requires a body: then `{}` is sent when no body argument is given. */
  bodyRequired: boolean;
  /** The query argument a confirmed call gets the time the user was asked in (`x-mcp-asked-at`), if any. */
  askedAt?: string;
}

export interface GeneratedTool {
  name: string;
  title: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, Schema>; required?: string[]; additionalProperties: false };
  annotations: {
    title: string;
    readOnlyHint: boolean;
    destructiveHint: boolean;
    idempotentHint: boolean;
    openWorldHint: false;
  };
  /** Every scope the operation needs (a caller must hold all of them). */
  scopes: string[];
  route: ToolRoute;
}

export interface ToolGeneratorOptions {
  /** Paths that are never tools (e.g. the session-only keys path), as prefixes. */
  excludePaths?: string[];
  /** Appended to every tool's description: what a model must know of the whole service (units, zones). */
  notes?: string;
}

/** The document with every local `$ref` replaced by a copy of its target (the documents are trees). */
function resolveRefs(doc: Schema): (node: unknown) => unknown {
  const lookup = (ref: string): unknown =>
    ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>(
        (node, part) => (node as Schema | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')],
        doc,
      );
  const walk = (node: unknown, seen: ReadonlySet<string>): unknown => {
    if (Array.isArray(node)) return node.map((n) => walk(n, seen));
    if (!node || typeof node !== 'object') return node;
    const ref = (node as Schema).$ref;
    if (typeof ref === 'string' && ref.startsWith('#/')) {
      // A schema that refers to itself would never end: past its first level it is any value.
      if (seen.has(ref)) return {};
      return walk(lookup(ref), new Set([...seen, ref]));
    }
    return Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v, seen)]));
  };
  return (node) => walk(node, new Set());
}

/** The scopes an API key needs for an operation; undefined when no API key may call it. */
function keyScopes(op: Operation, doc: Schema): string[] | undefined {
  const security = op.security ?? (doc.security as Operation['security']) ?? [];
  const requirement = security.find((r) => 'apiKey' in r);
  return requirement?.apiKey;
}

/**
 * Turns each operation an API key may call into a tool (not those answering with an event
 * stream). Throws on an operation that names no scope.
 */
export function toolsFromOpenApi(document: object, options: ToolGeneratorOptions = {}): GeneratedTool[] {
  const doc = document as Schema;
  const deref = resolveRefs(doc);
  const tools: GeneratedTool[] = [];
  const paths = (doc.paths ?? {}) as Record<string, Record<string, Operation | Parameter[]>>;
  for (const [path, item] of Object.entries(paths)) {
    if (NEVER.some((re) => re.test(path)) || options.excludePaths?.some((p) => path.startsWith(p))) continue;
    const shared = (item.parameters ?? []) as Parameter[];
    for (const method of METHODS) {
      const op = item[method] as Operation | undefined;
      if (!op?.operationId || streams(op)) continue;
      const scopes = keyScopes(op, doc);
      if (scopes === undefined) continue;
      if (scopes.length === 0) {
        throw new Error(
          `${method.toUpperCase()} ${path} (${op.operationId}) may be called with an API key but its security names no scope`,
        );
      }
      tools.push(
        toTool(
          path,
          method,
          op,
          scopes,
          [...shared, ...(op.parameters ?? [])].map((p) => deref(p) as Parameter),
          deref,
          options,
        ),
      );
    }
  }
  return tools;
}

function toTool(
  path: string,
  method: string,
  op: Operation,
  scopes: string[],
  params: Parameter[],
  deref: (n: unknown) => unknown,
  options: ToolGeneratorOptions,
): GeneratedTool {
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  const route: ToolRoute = {
    method: method.toUpperCase(),
    path,
    pathArgs: [],
    queryArgs: [],
    headerArgs: {},
    body: 'none',
    bodyArgs: [],
    bodyRequired: false,
  };
  const add = (name: string, schema: Schema | undefined, description: string | undefined, isRequired: boolean) => {
    properties[name] = {
      ...(schema ?? { type: 'string' }),
      ...(description && !schema?.description ? { description } : {}),
    };
    if (isRequired) required.push(name);
  };
  for (const p of params) {
    if (p.in === 'path') {
      route.pathArgs.push(p.name);
      add(p.name, p.schema, p.description, true);
    } else if (p.in === 'query') {
      route.queryArgs.push(p.name);
      if (p['x-mcp-asked-at'] === true) route.askedAt = p.name;
      add(p.name, p.schema, p.description, p.required === true);
    } else if (p.in === 'header' && HEADER_ARGUMENTS[p.name.toLowerCase()]) {
      const arg = HEADER_ARGUMENTS[p.name.toLowerCase()]!;
      route.headerArgs[arg] = p.name;
      add(arg, p.schema, p.description, p.required === true);
    }
  }
  const bodySchema = deref(op.requestBody?.content?.['application/json']?.schema) as Schema | undefined;
  if (bodySchema) {
    const bodyRequired = op.requestBody?.required === true;
    route.bodyRequired = bodyRequired;
    const props =
      bodySchema.type === 'object' ? (bodySchema.properties as Record<string, Schema> | undefined) : undefined;
    const collides = props && Object.keys(props).some((name) => name in properties || name === 'body');
    if (props && !collides && Object.keys(props).length > 0) {
      route.body = 'properties';
      for (const [name, schema] of Object.entries(props)) {
        route.bodyArgs.push(name);
        add(
          name,
          schema,
          undefined,
          bodyRequired && ((bodySchema.required as string[] | undefined)?.includes(name) ?? false),
        );
      }
    } else if (!props || Object.keys(props).length > 0) {
      route.body = 'whole';
      add('body', bodySchema, 'The request body', bodyRequired);
    }
  }
  const title = op.summary ?? op.operationId!;
  const readOnly = route.method === 'GET';
  const description = [
    title.endsWith('.') ? title : `${title}.`,
    op.description,
    `Calls ${route.method} ${path}; needs the scope${scopes.length > 1 ? 's' : ''} ${scopes.join(' and ')}.`,
    options.notes,
  ]
    .filter(Boolean)
    .join('\n\n');
  return {
    name: op.operationId!,
    title,
    description,
    inputSchema: { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false },
    annotations: {
      title,
      readOnlyHint: readOnly,
      destructiveHint: route.method === 'DELETE',
      idempotentHint: readOnly || route.method === 'PUT' || route.method === 'DELETE',
      openWorldHint: false,
    },
    scopes,
    route,
  };
}

/** A problem with a tool's arguments: where (a JSON pointer) and what. */
export interface ArgumentProblem {
  path: string;
  message: string;
}

const isScalar = (v: unknown) => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/**
 * The REST request a tool call stands for, or the problems that stop it being sent. Only what
 * the URL needs is checked here (required path arguments, scalar query values, unknown names);
 * everything else is the route's own validation, so a tool and its REST call cannot disagree.
 */
export function toRequest(
  tool: GeneratedTool,
  args: Record<string, unknown>,
):
  | { ok: true; url: string; headers: Record<string, string>; body?: unknown }
  | { ok: false; problems: ArgumentProblem[] } {
  const r = tool.route;
  const problems: ArgumentProblem[] = [];
  for (const name of Object.keys(args)) {
    if (!(name in tool.inputSchema.properties))
      problems.push({ path: `/${name}`, message: 'is not an argument of this tool' });
  }
  let url = r.path;
  for (const name of r.pathArgs) {
    const value = args[name];
    if (value === undefined || value === null || value === '')
      problems.push({ path: `/${name}`, message: 'is required' });
    else if (!isScalar(value)) problems.push({ path: `/${name}`, message: 'must be a string' });
    else url = url.replace(`{${name}}`, encodeURIComponent(String(value)));
  }
  const query = new URLSearchParams();
  for (const name of r.queryArgs) {
    const value = args[name];
    if (value === undefined || value === null) continue;
    const values = Array.isArray(value) ? value : [value];
    if (!values.every(isScalar))
      problems.push({ path: `/${name}`, message: 'must be a string, number or boolean (or a list of them)' });
    else for (const v of values) query.append(name, String(v));
  }
  const headers: Record<string, string> = {};
  for (const [arg, header] of Object.entries(r.headerArgs)) {
    const value = args[arg];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') problems.push({ path: `/${arg}`, message: 'must be a string' });
    else headers[header.toLowerCase()] = value;
  }
  for (const name of tool.inputSchema.required ?? []) {
    if (args[name] === undefined && !r.pathArgs.includes(name))
      problems.push({ path: `/${name}`, message: 'is required' });
  }
  if (problems.length > 0) return { ok: false, problems };
  const search = query.toString();
  url = search ? `${url}?${search}` : url;
  if (r.body === 'whole')
    return args.body === undefined ? { ok: true, url, headers } : { ok: true, url, headers, body: args.body };
  if (r.body === 'properties') {
    const entries = r.bodyArgs.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]);
    return entries.length > 0 || r.bodyRequired
      ? { ok: true, url, headers, body: Object.fromEntries(entries) }
      : { ok: true, url, headers };
  }
  return { ok: true, url, headers };
}
