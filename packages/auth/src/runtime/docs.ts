import { dirname } from 'node:path';
import { Router } from 'express';

/** swagger-ui-dist, an npm dependency: the reference page loads nothing from a CDN. */
const swaggerUi = dirname(require.resolve('swagger-ui-dist/package.json'));
const ASSETS = {
  'swagger-ui-bundle.js': 'application/javascript',
  'swagger-ui.css': 'text/css',
  'favicon-32x32.png': 'image/png',
} as const;

/** Where {@link docsRouter} serves the reference page, its assets and the document: `/docs/<service>`. */
export const docsPath = (service: string): string => `/docs/${service}`;

/**
 * `GET /docs/<service>`: the service's OpenAPI document rendered by Swagger UI. Every URL sits
 * under /docs/<service>/ (the document too, as /docs/<service>/openapi.json) so the same page
 * works through the gateway, which routes only that prefix to the service, and on the service's
 * own port. The page has no inline script: Swagger UI starts from init.js, so helmet's CSP
 * (script-src 'self') stays as strict as on every other route.
 */
export function docsRouter(service: string, openapiDocument: { info?: { title?: string } }): Router {
  const base = docsPath(service);
  const title = openapiDocument.info?.title ?? service;
  const page = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} reference</title>
<link rel="icon" type="image/png" href="${base}/favicon-32x32.png">
<link rel="stylesheet" href="${base}/swagger-ui.css">
<script src="${base}/swagger-ui-bundle.js" defer></script>
<script src="${base}/init.js" defer></script>
</head>
<body>
<noscript>This reference needs JavaScript. The document itself is at <a href="${base}/openapi.json">${base}/openapi.json</a>.</noscript>
<main id="reference"></main>
</body>
</html>
`;
  const init = `// Renders ${base}/openapi.json with Swagger UI (loaded just before this file).
window.ui = SwaggerUIBundle({
  url: ${JSON.stringify(`${base}/openapi.json`)},
  dom_id: '#reference',
  deepLinking: true,
  displayOperationId: true,
  validatorUrl: null,
});
`;

  const router = Router();
  router.get([base, `${base}/`], (_req, res) => {
    res.type('html').send(page);
  });
  router.get(`${base}/init.js`, (_req, res) => {
    res.type('application/javascript').send(init);
  });
  router.get(`${base}/openapi.json`, (_req, res) => {
    res.json(openapiDocument);
  });
  for (const [file, type] of Object.entries(ASSETS)) {
    router.get(`${base}/${file}`, (_req, res, next) => {
      // `root`: pnpm installs under node_modules/.pnpm, and send refuses a dot folder in a bare path.
      res.type(type).sendFile(file, { root: swaggerUi, maxAge: '1h' }, (err) => err && next(err));
    });
  }
  return router;
}
