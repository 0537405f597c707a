import { errorCatalogProblems } from '@app/devstack';
import { ALL_ERROR_CODES } from '../src/domain/errors.js';
import { openapiDocument } from '../src/openapi.js';

describe('the error catalog (src/domain/errors.ts) and the OpenAPI document', () => {
  // Clipboard answers `{ error: message }`: clients never see a code, so the document names only
  // the platform's (sign-in, webhooks) and the check runs one way.
  it('agree: every code an error response names is catalogued with that status', () => {
    expect(errorCatalogProblems(openapiDocument, ALL_ERROR_CODES)).toEqual([]);
  });
});
