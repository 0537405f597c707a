import { errorCatalogSuite } from '@app/devstack';
import { ALL_ERROR_CODES } from '../src/domain/errors.js';
import { openapiDocument } from '../src/openapi.js';

// Clipboard answers `{ error: message }`: clients never see a code, so its document names only
// the platform's (sign-in, webhooks) and the check runs one way.
errorCatalogSuite({ document: openapiDocument, catalog: ALL_ERROR_CODES });
