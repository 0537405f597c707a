import type { IncomingHttpHeaders } from 'node:http';
import { InvalidClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { unsafeInputProblem } from '@app/http-errors/validation';

/**
 * A GET of a client's document under the webhook targets' rules against private addresses
 * (composed by runtime from the webhooks' outbound request): its status, headers and body, or a
 * rejection (a refused target is a TargetRefusedError, a longer body a TooLargeError, no answer
 * in time a TimeoutError).
 */
export type GetDocument = (
  url: string,
  maxBytes: number,
  timeoutMs: number,
) => Promise<{ status: number; headers: IncomingHttpHeaders; body: Buffer }>;

/** A Client ID Metadata Document larger than this is refused. */
const CLIENT_DOCUMENT_MAX_BYTES = 5 * 1024;
/** How long its server has to answer, whole. */
const FETCH_TIMEOUT_MS = 5000;
/** The longest a fetched copy is used, whatever its caching headers say. */
const MAX_CACHE_SECONDS = 24 * 3600;
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** https, or http on the local machine (a desktop assistant's callback). */
function allowedRedirect(uri: string): boolean {
  try {
    const url = new URL(uri);
    if (url.hash) return false;
    return url.protocol === 'https:' || (url.protocol === 'http:' && LOOPBACK.has(url.hostname));
  } catch {
    return false;
  }
}

/** What is wrong with a client's redirect URIs and grant types, registered or in its metadata document. */
export function clientMetadataProblem(client: { redirect_uris?: unknown; grant_types?: unknown }): string | undefined {
  const uris: unknown = client.redirect_uris;
  if (!Array.isArray(uris) || uris.length === 0) return 'redirect_uris must be a non-empty list of URLs';
  const bad = uris.map(String).find((uri) => !allowedRedirect(uri));
  if (bad !== undefined) return `redirect_uri ${bad} must be https, or http on localhost or 127.0.0.1`;
  const grants = client.grant_types;
  if (
    grants !== undefined &&
    (!Array.isArray(grants) || grants.some((g) => g !== 'authorization_code' && g !== 'refresh_token'))
  ) {
    return 'grant_types may only be authorization_code and refresh_token';
  }
  return undefined;
}

/** Whether a `client_id` is the URL of a Client ID Metadata Document rather than a registered client's id. */
export function isClientDocumentUrl(clientId: string): boolean {
  return /^https?:\/\//i.test(clientId);
}

/**
 * How long a fetched document may be used, as its caching headers say, at most a day: `no-store`
 * and `no-cache` (or no caching header at all) mean not at all, then `max-age`, then `Expires`.
 */
function cacheSeconds(headers: IncomingHttpHeaders, now = Date.now()): number {
  const control = String(headers['cache-control'] ?? '').toLowerCase();
  if (/(^|[\s,])no-(store|cache)\b/.test(control)) return 0;
  const maxAge = /(^|[\s,])max-age\s*=\s*"?(\d+)/.exec(control)?.[2];
  let seconds = 0;
  if (maxAge !== undefined) seconds = Number(maxAge);
  else if (headers.expires) {
    const since = headers.date ? Date.parse(headers.date) : now;
    const until = Date.parse(headers.expires);
    seconds = Number.isNaN(until) ? 0 : Math.floor((until - (Number.isNaN(since) ? now : since)) / 1000);
  }
  return Math.max(0, Math.min(MAX_CACHE_SECONDS, seconds));
}

/** Why a client_id URL may not be fetched at all (the draft's URL rules, and where plain http is allowed). */
function urlProblem(clientId: string, allowPrivate: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(clientId);
  } catch {
    return 'not a URL';
  }
  if (url.username || url.password) return 'URL with credentials';
  if (url.hash) return 'URL with a fragment';
  if (url.pathname === '/' || /\/\.\.?(\/|$)/.test(clientId.replace(/[?#].*$/, '')))
    return 'URL without a path or with . or .. segments';
  if (url.protocol === 'https:') return undefined;
  if (url.protocol === 'http:' && LOOPBACK.has(url.hostname) && allowPrivate) return undefined;
  return 'URL neither https nor allowed plain http';
}

/** A fetch's failure in words for the log (never the document's content). */
function fetchProblem(err: unknown): string {
  const e = err as { name?: string; code?: string };
  if (e.name === 'TooLargeError') return `larger than ${CLIENT_DOCUMENT_MAX_BYTES} bytes`;
  if (e.name === 'TimeoutError') return `no answer within ${FETCH_TIMEOUT_MS / 1000} s`;
  if (e.name === 'TargetRefusedError') return 'address refused (private, loopback or link-local)';
  return `not fetched (${e.code ?? e.name ?? 'error'})`;
}

/** The document's fields a public client may have; what is wrong with the rest. */
function documentProblem(url: string, doc: unknown): string | undefined {
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) return 'not a JSON object';
  const d = doc as Record<string, unknown>;
  const unsafe = unsafeInputProblem(d);
  if (unsafe) return `a field that ${unsafe.message}`;
  if (d.client_id !== url) return 'a client_id other than its own URL';
  if (d.token_endpoint_auth_method !== undefined && d.token_endpoint_auth_method !== 'none')
    return 'a token_endpoint_auth_method other than none';
  if (d.client_secret !== undefined) return 'a client_secret';
  if (d.client_name !== undefined && typeof d.client_name !== 'string') return 'a client_name that is not a string';
  return clientMetadataProblem(d) && 'redirect_uris or grant_types not allowed';
}

/**
 * What an authorize or token request shows for every document that could not be used, whatever
 * the reason: an unauthenticated caller learns nothing of what answers at the URL it named (an
 * open port, a size, what a document said).
 */
const CLIENT_DOCUMENT_REFUSED =
  'The client metadata document named by client_id could not be fetched or is not a valid public client';

/** The client's fields this server uses, and only those, are kept: whatever else a client sent is dropped. */
const USED_FIELDS = [
  'client_id',
  'client_id_issued_at',
  'client_name',
  'redirect_uris',
  'grant_types',
  'response_types',
] as const;
/** How much of a client's name is kept and shown on the consent page. */
const CLIENT_NAME_MAX = 200;

/** A registered or fetched client as it is stored and answered: the fields in USED_FIELDS, public (`none`). */
export function usedClientFields(client: OAuthClientInformationFull): OAuthClientInformationFull {
  const kept = Object.fromEntries(
    USED_FIELDS.filter((f) => client[f] !== undefined).map((f) => [f, client[f]]),
  ) as OAuthClientInformationFull;
  if (typeof kept.client_name === 'string') kept.client_name = kept.client_name.slice(0, CLIENT_NAME_MAX);
  return { ...kept, token_endpoint_auth_method: 'none' };
}

/**
 * Fetches a Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document, the MCP
 * authorization spec's recommended registration) under the webhook targets' rules against
 * private addresses (`allowPrivate`: OAUTH_CIMD_ALLOW_PRIVATE=1, which also allows plain http on
 * loopback), and answers the client it describes with how long the copy may be used. Every
 * failure is `invalid_client` with {@link CLIENT_DOCUMENT_REFUSED}, its reason (never the
 * document's content) handed to `log` only.
 */
export async function fetchClientDocument(
  clientId: string,
  allowPrivate: boolean,
  get: GetDocument,
  log: (reason: string) => void = () => {},
): Promise<{ client: OAuthClientInformationFull; ttlSeconds: number }> {
  const refuse = (reason: string) => {
    log(reason);
    return new InvalidClientError(CLIENT_DOCUMENT_REFUSED);
  };
  const bad = urlProblem(clientId, allowPrivate);
  if (bad) throw refuse(bad);
  let answer: Awaited<ReturnType<GetDocument>>;
  try {
    answer = await get(clientId, CLIENT_DOCUMENT_MAX_BYTES, FETCH_TIMEOUT_MS);
  } catch (err) {
    throw refuse(fetchProblem(err));
  }
  if (answer.status !== 200) throw refuse(`HTTP ${answer.status}`);
  let doc: unknown;
  try {
    doc = JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw refuse('not JSON');
  }
  const problem = documentProblem(clientId, doc);
  if (problem) throw refuse(problem);
  return { client: usedClientFields(doc as OAuthClientInformationFull), ttlSeconds: cacheSeconds(answer.headers) };
}
