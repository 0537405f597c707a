// The services' OpenAPI documents, read from the apps' builds (each exports
// `openapiDocument` from dist/openapi.js), so the client and the lint see exactly what the
// services serve at /openapi.json.
import { createRequire } from 'node:module';

export { SERVICES } from './services.generated.mjs';

const require = createRequire(import.meta.url);

/** The built OpenAPI document of one service, as a plain JSON value. */
export function loadDocument(service) {
  const { openapiDocument } = require(`@app/${service}/dist/openapi.js`);
  return JSON.parse(JSON.stringify(openapiDocument));
}
