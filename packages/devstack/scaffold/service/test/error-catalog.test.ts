import { errorCatalogSuite } from '@app/devstack';
import { ALL_ERROR_CODES, ERROR_CODES } from '../src/domain/errors.js';
import { openapiDocument } from '../src/openapi.js';

errorCatalogSuite({ document: openapiDocument, catalog: ALL_ERROR_CODES, own: ERROR_CODES });
