type Doc = { paths?: Record<string, Record<string, any>>; webhooks?: Record<string, Record<string, any>> } & Record<
  string,
  any
>;

/** A snake_case word with at least one underscore, standing alone (not part of a path, name or pointer). */
const CODE = /(?<![\w./-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w/-])/g;

function resolve(doc: Doc, node: any): any {
  while (node && typeof node.$ref === 'string' && node.$ref.startsWith('#/')) {
    node = node.$ref
      .slice(2)
      .split('/')
      .reduce((acc: any, part: string) => acc?.[part], doc);
  }
  return node;
}

/** Each error code an error response (status 400 and up) of the document names, with the statuses it is named under. */
function documentedErrorCodes(document: object): Map<string, Set<number>> {
  const doc = document as Doc;
  const codes = new Map<string, Set<number>>();
  for (const items of [doc.paths, doc.webhooks]) {
    for (const item of Object.values(items ?? {})) {
      for (const operation of Object.values(item)) {
        for (const [status, response] of Object.entries<any>(operation?.responses ?? {})) {
          if (!(Number(status) >= 400)) continue;
          for (const [code] of String(resolve(doc, response)?.description ?? '').matchAll(CODE)) {
            if (!codes.has(code)) codes.set(code, new Set());
            codes.get(code)!.add(Number(status));
          }
        }
      }
    }
  }
  return codes;
}

/**
 * Where a service's OpenAPI document and its error catalog disagree: a code an error response
 * names that the catalog lacks, or names under a status other than the catalog's; and, with
 * `own` (the service's own codes, when its envelope shows clients a code), a code no error
 * response names. An empty list means they agree.
 */
function errorCatalogProblems(
  document: object,
  catalog: Readonly<Record<string, number>>,
  own?: Readonly<Record<string, number>>,
): string[] {
  const documented = documentedErrorCodes(document);
  const problems: string[] = [];
  for (const [code, statuses] of documented) {
    if (!(code in catalog))
      problems.push(`the document names ${code} (${[...statuses].join(', ')}), which the catalog lacks`);
    else
      for (const status of statuses)
        if (catalog[code] !== status)
          problems.push(`the document names ${code} under ${status}; the catalog answers it with ${catalog[code]}`);
  }
  for (const code of Object.keys(own ?? {})) {
    if (!documented.has(code))
      problems.push(`the catalog has ${code} (${own![code]}), which no error response of the document names`);
  }
  return problems;
}

/**
 * The catalog check of one service, as a jest suite: its document and catalog agree (see
 * {@link errorCatalogProblems}), and the check itself would see a code dropped from either side.
 * `own` is left out where the envelope shows clients no code (clipboard): then only the document's
 * codes are checked.
 */
export function errorCatalogSuite(target: {
  document: object;
  catalog: Readonly<Record<string, number>>;
  own?: Readonly<Record<string, number>>;
}): void {
  const { document, catalog, own } = target;
  describe('the error catalog (src/domain/errors.ts) and the OpenAPI document', () => {
    it(
      own
        ? 'agree: every code an error response names is catalogued with that status, and every code of the service is named'
        : 'agree: every code an error response names is catalogued with that status',
      () => {
        expect(errorCatalogProblems(document, catalog, own)).toEqual([]);
      },
    );

    it('would catch a code left out of the catalog, a status that differs, and a code left out of the document', () => {
      const [code, statuses] = [...documentedErrorCodes(document)][0]!;
      const { [code]: status, ...withoutCode } = catalog;
      expect(errorCatalogProblems(document, withoutCode)).toEqual([expect.stringContaining(`names ${code}`)]);
      expect(errorCatalogProblems(document, { ...catalog, [code]: status! + 1 })).toHaveLength(statuses.size);
      expect(errorCatalogProblems(document, { ...catalog, made_up_code: 409 }, { ...own, made_up_code: 409 })).toEqual([
        expect.stringContaining('made_up_code'),
      ]);
    });
  });
}
