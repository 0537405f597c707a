import { createHash, randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { TestApp } from './harness.js';

/**
 * An assistant's OAuth access token for `accountId`, through the service's own authorization
 * server as an assistant gets one: dynamic registration, authorize with PKCE S256 as the signed-in
 * browser (a session the admin command makes), Allow on the consent page, the code for a token.
 */
export async function oauthAccessToken(t: TestApp, accountId: string, scope?: string): Promise<string> {
  const origin = `http://127.0.0.1:${(t.server.address() as AddressInfo).port}`;
  const base = `${origin}/oauth/clipboard`;
  const redirectUri = 'http://127.0.0.1:9/callback';
  const { cookie } = (await t.admin('create-session', '--account', accountId)) as { cookie: string };
  const registered = await fetch(`${base}/register`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({
      client_name: 'Test assistant',
      redirect_uris: [redirectUri],
      token_endpoint_auth_method: 'none',
    }),
  });
  const clientId = ((await registered.json()) as { client_id: string }).client_id;
  const verifier = randomBytes(32).toString('base64url');
  const query = new URLSearchParams({
    client_id: clientId,
    redirect_uri: redirectUri,
    response_type: 'code',
    state: 'st',
    ...(scope && { scope }),
    code_challenge: createHash('sha256').update(verifier).digest('base64url'),
    code_challenge_method: 'S256',
  });
  const page = await (
    await fetch(`${base}/authorize?${query.toString()}`, { redirect: 'manual', headers: { Cookie: cookie } })
  ).text();
  const request = /name="request" value="([^"]+)"/.exec(page)?.[1];
  if (!request) throw new Error(`authorize: no consent form in ${page.slice(0, 300)}`);
  const consent = await fetch(`${base}/consent`, {
    method: 'POST',
    redirect: 'manual',
    headers: { Cookie: cookie, 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ request, decision: 'allow' }),
  });
  const code = new URL(consent.headers.get('location') ?? 'about:blank').searchParams.get('code');
  if (!code) throw new Error(`consent: ${consent.status}, no code`);
  const token = await fetch(`${base}/token`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      client_id: clientId,
      grant_type: 'authorization_code',
      code,
      code_verifier: verifier,
      redirect_uri: redirectUri,
    }),
  });
  const body = (await token.json()) as { access_token?: string };
  if (!body.access_token) throw new Error(`token: ${token.status} ${JSON.stringify(body)}`);
  return body.access_token;
}
