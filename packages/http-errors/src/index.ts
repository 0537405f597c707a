export { AppError, DependencyUnavailableError, PLATFORM_ERROR_CODES, RETRY_AFTER_UNAVAILABLE_SECONDS, errorCatalog, errors, type ErrorCatalog, type ErrorDetail } from './errors.js';
export { errorBody, type EnvelopeStyle } from './envelope.js';
export { errorHandler, isDependencyOutage, notFoundHandler, type ErrorLogger } from './handlers.js';
export { requestId } from './request-id.js';
export { compileBody, compileQuery, addSchema, toDetails, type Validator } from './validation.js';
export { ConfigError, envInt, serviceEnv, type ServiceEnv } from './env.js';
export { documentOutages, errorEnvelopeSchema } from './openapi.js';
export { MAX_JSON_DEPTH, jsonBody, rejectUnsafeInput, unsafeInputProblem } from './input.js';
export { UUID_PATTERN, idPathParameter, isUuid, uuidSchema } from './ids.js';
