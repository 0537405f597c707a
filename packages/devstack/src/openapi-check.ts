import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { ValidateFunction } from 'ajv';

/** The bits of a supertest response the checker reads. */
interface CheckedResponse {
  status: number;
  body: unknown;
  headers: Record<string, string>;
  req: { method: string; path: string };
}

type Doc = { paths: Record<string, Record<string, any>> } & Record<string, any>;

const escapePointer = (s: string) => encodeURIComponent(s.replace(/~/g, '~0').replace(/\//g, '~1'));

function resolveRef(doc: Doc, node: any): any {
  while (node && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((acc: any, part: string) => acc?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
  }
  return node;
}

/**
 * Routes every service answers on its own port and the gateway does not route (DESIGN.md
 * "Observability"): the documents, whose server is the gateway, leave them out, so they are not
 * checked here (the platform suite checks their answers).
 */
const SERVICE_PORT_ROUTES = new Set(['/healthz', '/readyz', '/metrics', '/openapi.json']);

/**
 * Checks responses against a service's OpenAPI 3.1 document: the path and method must be
 * documented (except {@link SERVICE_PORT_ROUTES}), the status must be one the operation lists (or `default`), and a JSON body must
 * validate against the documented schema. Schemas compile once per (path, method, status).
 * Throws with the ajv errors when a response drifts from the document.
 */
export function createResponseChecker(doc: object): (res: CheckedResponse) => void {
  const d = doc as Doc;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(d, 'openapi.json');
  const templates = Object.keys(d.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`),
  }));
  const cache = new Map<string, ValidateFunction | null>();

  return (res) => {
    const method = res.req.method.toLowerCase();
    const path = res.req.path.split('?')[0]!;
    if (SERVICE_PORT_ROUTES.has(path) && !d.paths[path]) return;
    const match = templates.filter((t) => t.regex.test(path) && d.paths[t.template]![method]);
    // Prefer a literal segment over a parameter (/tasks/search over /tasks/{id}).
    match.sort((a, b) => (a.template.match(/\{/g)?.length ?? 0) - (b.template.match(/\{/g)?.length ?? 0));
    const found = match[0];
    if (!found) throw new Error(`${method.toUpperCase()} ${path} is not in the OpenAPI document`);
    const op = d.paths[found.template]![method];
    const statusKey = op.responses?.[String(res.status)]
      ? String(res.status)
      : op.responses?.default
        ? 'default'
        : undefined;
    if (!statusKey)
      throw new Error(
        `${method.toUpperCase()} ${found.template} answered ${res.status}, which the OpenAPI document does not list`,
      );
    const key = `${found.template} ${method} ${statusKey}`;
    if (!cache.has(key)) {
      const response = resolveRef(d, op.responses[statusKey]);
      const hasSchema = response?.content?.['application/json']?.schema !== undefined;
      const pointer =
        response === op.responses[statusKey]
          ? `openapi.json#/paths/${escapePointer(found.template)}/${method}/responses/${statusKey}/content/application~1json/schema`
          : `openapi.json#${op.responses[statusKey].$ref.slice(1)}/content/application~1json/schema`;
      cache.set(key, hasSchema ? ajv.compile({ $ref: pointer }) : null);
    }
    const validate = cache.get(key);
    if (!validate) return;
    if (!validate(res.body)) {
      throw new Error(
        `${method.toUpperCase()} ${found.template} ${res.status} body does not match the OpenAPI document: ${ajv.errorsText(validate.errors)}\nbody: ${JSON.stringify(res.body).slice(0, 2000)}`,
      );
    }
  };
}
