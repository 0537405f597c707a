// `@app/http-errors`: the one error type (AppError, the `errors` catalog of common answers), the
// JSON envelope it becomes, the one place that turns errors into responses (handlers), and the
// byte bound of a page that every list and feed shares (page-size), and record ids (ids).
export {
  AppError,
  DependencyUnavailableError,
  RETRY_AFTER_UNAVAILABLE_SECONDS,
  errorCatalog,
  errors,
  type ErrorDetail,
} from './errors.js';
export { errorBody, type EnvelopeStyle } from './envelope.js';
export { errorHandler, isDependencyOutage, notFoundHandler } from './handlers.js';
export { documentOutages, errorEnvelopeSchema } from './openapi.js';
export { MAX_PAGE_BYTES, entriesWithin, pageWithin } from './page-size.js';
export { isUuid, recordId } from './ids.js';
