export { AppError, errors, type ErrorDetail } from './errors.js';
export { errorBody, type EnvelopeStyle } from './envelope.js';
export { errorHandler, notFoundHandler, type ErrorLogger } from './handlers.js';
export { requestId } from './request-id.js';
export { compileBody, compileQuery, addSchema, toDetails, type Validator } from './validation.js';
export { ConfigError, envInt, serviceEnv, type ServiceEnv } from './env.js';
