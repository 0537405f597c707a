import { documentedErrorCodes, errorCatalogProblems } from '@app/devstack';
import { ALL_ERROR_CODES, ERROR_CODES } from '../src/domain/errors.js';
import { openapiDocument } from '../src/openapi.js';

describe('the error catalog (src/domain/errors.ts) and the OpenAPI document', () => {
  it('agree: every code an error response names is catalogued with that status, and every code of the service is named', () => {
    expect(errorCatalogProblems(openapiDocument, ALL_ERROR_CODES, ERROR_CODES)).toEqual([]);
  });

  it('reads the codes from the error responses', () => {
    expect(documentedErrorCodes(openapiDocument).size).toBeGreaterThan(Object.keys(ERROR_CODES).length);
  });

  it('would catch a code left out of the catalog, a status that differs, and a code left out of the document', () => {
    const [code, status] = Object.entries(ERROR_CODES)[0]!;
    const { [code]: _dropped, ...withoutCode } = ALL_ERROR_CODES as Record<string, number>;
    expect(errorCatalogProblems(openapiDocument, withoutCode)).toEqual([expect.stringContaining(`names ${code}`)]);
    expect(errorCatalogProblems(openapiDocument, { ...ALL_ERROR_CODES, [code]: status + 1 }).length).toBeGreaterThan(0);
    expect(errorCatalogProblems(openapiDocument, { ...ALL_ERROR_CODES, made_up_code: 409 }, { made_up_code: 409 })).toEqual([expect.stringContaining('made_up_code')]);
  });
});
