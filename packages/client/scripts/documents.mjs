// The services' OpenAPI documents, read from the apps' builds (each exports
// `openapiDocument` from dist/openapi.js), so the client and the lint see exactly what the
// services serve at /openapi.json.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export { SERVICES } from './services.generated.mjs';

const require = createRequire(import.meta.url);
const apps = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'apps');

/** The built OpenAPI document of one service, as a plain JSON value. */
export function loadDocument(service) {
  // By path: the client does not depend on the apps (turbo.json, generated, builds them first).
  const { openapiDocument } = require(join(apps, service, 'dist', 'openapi.js'));
  return JSON.parse(JSON.stringify(openapiDocument));
}
