import { createHash, randomBytes } from 'node:crypto';

/**
 * An OAuth 2.1 client as an assistant runs it, against a service's authorization server through
 * the gateway (or a TLS terminator in front of it): dynamic registration (or the `identity` given:
 * a Client ID Metadata Document's URL and a redirect URI), the authorize step with PKCE S256
 * answered by a signed-in browser (its session cookie), and the token endpoint.
 * `fetchImpl` lets a caller send from a given source address or trust a test certificate.
 */
export interface OAuthClient {
  clientId: string;
  redirectUri: string;
  /** GET /authorize as the browser: no redirect followed. */
  authorize(
    params: { resource?: string; scope?: string; state?: string },
    cookie?: string,
  ): Promise<{ status: number; location: string | null; html: string; verifier: string }>;
  /** authorize, then Allow or Deny on the consent page: where the answer sends the browser. */
  answer(
    cookie: string,
    decision: 'allow' | 'deny',
    params?: { resource?: string; scope?: string },
  ): Promise<{ location: URL; verifier: string; consentHtml: string }>;
  /** The whole flow up to the code: authorize, then Allow on the consent page. */
  consent(
    cookie: string,
    params?: { resource?: string; scope?: string },
  ): Promise<{ code: string; verifier: string; consentHtml: string }>;
  token(fields: Record<string, string>): Promise<{ status: number; body: Record<string, any> }>;
  /** consent, then the code exchanged for tokens. */
  connect(
    cookie: string,
    params?: { resource?: string; scope?: string },
  ): Promise<{ access_token: string; refresh_token: string; expires_in: number; scope: string }>;
}

type Fetch = (url: string, init?: RequestInit) => Promise<Response>;

const challengeOf = (verifier: string) => createHash('sha256').update(verifier).digest('base64url');

async function register(base: string, redirectUri: string, fetchImpl: Fetch): Promise<string> {
  const registered = await fetchImpl(`${base}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Rehearsal assistant',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    }),
  });
  if (registered.status !== 201) throw new Error(`register: ${registered.status} ${await registered.text()}`);
  return ((await registered.json()) as { client_id: string }).client_id;
}

export async function oauthClient(
  origin: string,
  service: string,
  fetchImpl: Fetch = fetch,
  identity?: { clientId: string; redirectUri: string },
): Promise<OAuthClient> {
  const base = `${origin}/oauth/${service}`;
  const redirectUri = identity?.redirectUri ?? 'http://127.0.0.1:9/callback';
  const clientId = identity?.clientId ?? (await register(base, redirectUri, fetchImpl));

  const client: OAuthClient = {
    clientId,
    redirectUri,
    async authorize(params, cookie) {
      const verifier = randomBytes(32).toString('base64url');
      const query = new URLSearchParams({
        client_id: clientId,
        redirect_uri: redirectUri,
        response_type: 'code',
        code_challenge: challengeOf(verifier),
        code_challenge_method: 'S256',
        state: params.state ?? 'st-1',
        ...(params.scope ? { scope: params.scope } : {}),
        ...(params.resource ? { resource: params.resource } : {}),
      });
      const res = await fetchImpl(`${base}/authorize?${query}`, {
        redirect: 'manual',
        headers: cookie ? { Cookie: cookie } : {},
      });
      return { status: res.status, location: res.headers.get('location'), html: await res.text(), verifier };
    },
    async answer(cookie, decision, params = {}) {
      const page = await client.authorize(params, cookie);
      const requestId = /name="request" value="([^"]+)"/.exec(page.html)?.[1];
      if (page.status !== 200 || !requestId)
        throw new Error(`authorize: ${page.status} ${page.location ?? page.html.slice(0, 300)}`);
      const answer = await fetchImpl(`${base}/consent`, {
        method: 'POST',
        redirect: 'manual',
        headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ request: requestId, decision }),
      });
      const location = answer.headers.get('location');
      if (answer.status !== 302 || !location) throw new Error(`consent: ${answer.status}`);
      return { location: new URL(location), verifier: page.verifier, consentHtml: page.html };
    },
    async consent(cookie, params = {}) {
      const { location, verifier, consentHtml } = await client.answer(cookie, 'allow', params);
      const code = location.searchParams.get('code');
      if (!code) throw new Error(`consent: no code in ${location.origin}${location.pathname}`);
      return { code, verifier, consentHtml };
    },
    async token(fields) {
      const res = await fetchImpl(`${base}/token`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ client_id: clientId, ...fields }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, any> };
    },
    async connect(cookie, params = {}) {
      const { code, verifier } = await client.consent(cookie, params);
      const tokens = await client.token({
        grant_type: 'authorization_code',
        code,
        code_verifier: verifier,
        redirect_uri: redirectUri,
      });
      if (tokens.status !== 200) throw new Error(`token: ${tokens.status} ${JSON.stringify(tokens.body)}`);
      return tokens.body as Awaited<ReturnType<OAuthClient['connect']>>;
    },
  };
  return client;
}
