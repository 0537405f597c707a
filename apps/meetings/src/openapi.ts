/** The meetings service's OpenAPI 3.1 document; request validation compiles the same schemas. */
export const openapiDocument = {
  openapi: '3.1.0',
  info: { title: 'Meetings API', version: '1.0.0' },
  paths: {},
  components: {},
} as const;
