/** Asserts a body is the service's error envelope: rich `{ error: { code, message, requestId } }` or clipboard's `{ error }`. */
export function expectEnvelope(envelope: 'rich' | 'simple', body: unknown, code: string): void {
  if (envelope === 'simple') expect(body).toEqual({ error: expect.any(String) });
  else
    expect(body).toEqual({
      error: expect.objectContaining({ code, message: expect.any(String), requestId: expect.any(String) }),
    });
}
