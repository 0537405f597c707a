import { createCipheriv, createDecipheriv, createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import type { Kysely } from 'kysely';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import {
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidRequestError,
  InvalidScopeError,
  InvalidTargetError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type { AuthorizationParams, OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { unsafeInputProblem } from '@app/http-errors/validation';
import type { AuthConfig } from '../identity/config.js';
import { forgetCredential } from '../identity/credential-cache.js';
import type { Caller, CredentialResolver } from '../identity/middleware.js';
import type { AnyDb } from '../identity/repository.js';
import type { AuthDatabase } from '../identity/tables.js';
import { OAUTH_ACCESS_PREFIX, OAUTH_REFRESH_PREFIX, hashSecret, newSecret } from '../identity/tokens.js';
import { ACCESS_TOKEN_TTL_SECONDS, toAuthInfo } from '../identity/bearer.js';
import {
  clientMetadataProblem,
  fetchClientDocument,
  isClientDocumentUrl,
  usedClientFields,
  type GetDocument,
} from './client-metadata.js';
import * as repo from './repository.js';
import { inTransaction } from '../database/database.js';

/** A refresh token lives 30 days, and only until it is used once (access tokens: ACCESS_TOKEN_TTL_SECONDS). */
const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/**
 * A spent refresh token used again within this many seconds gets the pair it was exchanged for:
 * two sessions of one assistant refreshing at once both go on, instead of the loser ending the grant.
 */
const REFRESH_GRACE_SECONDS = 30;
/**
 * The pair a refresh token was exchanged for, sealed (AES-256-GCM) with a key only that token's
 * holder can derive: the database keeps a token's SHA-256, never the token, so the sealed pair is
 * no more readable there than the tokens themselves.
 */
function successorKey(refreshToken: string): Buffer {
  return createHash('sha256').update(`oauth-refresh-successor\0${refreshToken}`, 'utf8').digest();
}

function sealSuccessor(refreshToken: string, tokens: OAuthTokens): Buffer {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', successorKey(refreshToken), iv);
  const sealed = Buffer.concat([cipher.update(JSON.stringify(tokens), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), sealed]);
}

/** The pair sealed by `sealSuccessor`, its `expires_in` counted down by the seconds since. */
function openSuccessor(refreshToken: string, sealed: Buffer, secondsAgo: number): OAuthTokens | undefined {
  try {
    const decipher = createDecipheriv('aes-256-gcm', successorKey(refreshToken), sealed.subarray(0, 12));
    decipher.setAuthTag(sealed.subarray(12, 28));
    const tokens = JSON.parse(
      Buffer.concat([decipher.update(sealed.subarray(28)), decipher.final()]).toString('utf8'),
    ) as OAuthTokens;
    return {
      ...tokens,
      expires_in: Math.max(1, (tokens.expires_in ?? ACCESS_TOKEN_TTL_SECONDS) - Math.floor(secondsAgo)),
    };
  } catch {
    return undefined;
  }
}

/** A token exchange's result, decided inside its transaction and acted on after it. */
type Exchange =
  { tokens: OAuthTokens } | { error: string; scope?: boolean; target?: boolean; replayedGrant?: string | null };

/** What the authorize step shows: the sign-in form, or the consent for a stored pending request. */
export type ConsentView =
  | { signedIn: false }
  | {
      signedIn: true;
      requestId: string;
      clientName: string;
      scopes: string[];
      redirectUri: string;
      resource: string;
      clientHost?: string;
    };

export interface ProviderOptions {
  db: AnyDb;
  cfg: AuthConfig;
  credentials: CredentialResolver;
  /** The MCP endpoint's URL as this request reaches it: the only resource a token may be asked for. */
  resourceOf(req: Request): string;
  /** Renders the authorize page (sign-in or consent) into the response. */
  render(res: Response, view: ConsentView): void;
  /**
   * How Client ID Metadata Documents are fetched; `allowPrivate(url)` (OAUTH_CIMD_ALLOW_PRIVATE=1,
   * or the URL listed in OAUTH_CIMD_TRUSTED) lets that one be on a private address or plain http on
   * loopback; `log` hears why one was refused (never its content).
   */
  clientDocuments: { allowPrivate: (url: string) => boolean; get: GetDocument; log?: (reason: string) => void };
}

/**
 * The service's OAuth 2.1 authorization server behind the SDK's handlers: public clients only
 * (dynamic registration drops any secret), PKCE S256 (checked by the SDK's token handler),
 * consent per request, opaque tokens stored hashed, refresh tokens rotated on use (reusing a
 * spent one within REFRESH_GRACE_SECONDS gets the same new pair; later it ends the whole grant,
 * as OAuth 2.1 asks for public clients).
 */
export class OAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthRegisteredClientsStore;
  private readonly db: Kysely<AuthDatabase>;

  constructor(private readonly o: ProviderOptions) {
    this.db = o.db as Kysely<AuthDatabase>;
    this.clientsStore = {
      getClient: async (clientId) => {
        // Postgres cannot hold a NUL in text: such an id names no client (400 invalid_client).
        if (unsafeInputProblem(clientId)) return undefined;
        const client = await repo.findClient(o.db, clientId);
        if (isClientDocumentUrl(clientId) && !client?.fresh) return this.fetchDocument(clientId);
        return client && { ...client.metadata, client_id: client.id, redirect_uris: client.redirectUris };
      },
      // Dynamic registration (RFC 7591) is deprecated for MCP clients in favour of Client ID
      // Metadata Documents; it stays for the clients that know nothing else.
      registerClient: async (client) => {
        const unsafe = unsafeInputProblem(client);
        if (unsafe) throw new InvalidClientMetadataError(`${unsafe.path.slice(1)} ${unsafe.message}`);
        const problem = clientMetadataProblem(client);
        if (problem) throw new InvalidClientMetadataError(problem);
        // Every client is public: a secret would be stored in plain text and protect nothing a
        // PKCE verifier does not already protect for an assistant on someone's machine. Only the
        // fields this server uses are kept (and answered): a registration stores a few hundred bytes.
        const registered = usedClientFields({
          ...client,
          client_id: (client as { client_id?: string }).client_id ?? randomUUID(),
        });
        await repo.insertClient(o.db, {
          id: registered.client_id,
          name: registered.client_name ?? null,
          redirectUris: registered.redirect_uris.map(String),
          metadata: registered,
        });
        return registered;
      },
    };
  }

  /**
   * A client whose id is the URL of its metadata document: fetched (its copy kept as long as its
   * caching headers say, at most a day), or `invalid_client` naming why not.
   */
  private async fetchDocument(url: string): Promise<OAuthClientInformationFull> {
    const { allowPrivate, get, log } = this.o.clientDocuments;
    const { client, ttlSeconds } = await fetchClientDocument(url, allowPrivate(url), get, log);
    const name = typeof client.client_name === 'string' ? client.client_name : null;
    await repo.saveDocumentClient(
      this.o.db,
      { id: url, name, redirectUris: client.redirect_uris.map(String), metadata: client },
      ttlSeconds,
    );
    return client;
  }

  private checkScopes(requested: string[] | undefined): string[] {
    if (!requested || requested.length === 0) return [...this.o.cfg.scopes];
    const unknown = requested.filter((s) => !this.o.cfg.scopes.includes(s));
    if (unknown.length > 0)
      throw new InvalidScopeError(
        `unknown scope ${unknown.join(' ')}; this service has ${this.o.cfg.scopes.join(' ')}`,
      );
    return [...new Set(requested)];
  }

  /**
   * RFC 8707: a token is for one resource, this server's MCP URL exactly (PUBLIC_URL's origin, or
   * the request's). Another (another host's /mcp/tasks included) is `invalid_target`; none asked
   * for binds the grant to this one, so every grant and token names where it may be used.
   */
  private checkResource(resource: URL | undefined, req: Request): string {
    const own = this.o.resourceOf(req);
    if (resource && resource.href !== own)
      throw new InvalidTargetError(`this server issues tokens only for its MCP server ${own}`);
    return own;
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const unsafe = unsafeInputProblem({
      state: params.state,
      scopes: params.scopes,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
    });
    if (unsafe) throw new InvalidRequestError(`${unsafe.path.slice(1)} ${unsafe.message}`);
    const scopes = this.checkScopes(params.scopes);
    const resource = this.checkResource(params.resource, res.req);
    const caller = (res.req as { caller?: Caller }).caller;
    res.set('Cache-Control', 'no-store');
    if (caller?.kind !== 'session') return this.o.render(res, { signedIn: false });
    const requestId = await repo.insertRequest(this.o.db, caller.accountId, {
      clientId: client.client_id,
      scopes,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      state: params.state ?? null,
      resource,
    });
    const clientHost = isClientDocumentUrl(client.client_id) ? new URL(client.client_id).host : undefined;
    this.o.render(res, {
      signedIn: true,
      requestId,
      clientName: client.client_name ?? client.client_id,
      scopes,
      redirectUri: params.redirectUri,
      resource,
      clientHost,
    });
  }

  /**
   * The consent form's answer: the pending request is taken (so it is answered once) and the
   * redirect URI returned with `code` and `state`, or `error=access_denied`, and `iss` (RFC 9207:
   * the client checks the answer came from the server it asked). Undefined when the request is
   * unknown, expired or another account's.
   */
  async decide(accountId: string, requestId: string, allow: boolean, issuer: string): Promise<string | undefined> {
    const request = await repo.takeRequest(this.o.db, requestId, accountId);
    if (!request) return undefined;
    const target = new URL(request.redirectUri);
    if (allow) {
      const code = newSecret('code');
      await repo.insertCode(this.o.db, hashSecret(code), accountId, request);
      target.searchParams.set('code', code);
    } else {
      target.searchParams.set('error', 'access_denied');
      target.searchParams.set('error_description', 'The user denied access');
    }
    if (request.state !== null) target.searchParams.set('state', request.state);
    target.searchParams.set('iss', issuer);
    return target.href;
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, authorizationCode: string): Promise<string> {
    // A used or expired code still gets its challenge checked: the exchange then refuses it (and a
    // replayed one ends what it issued), so only an unknown code stops here.
    const code = await repo.findCode(this.db, hashSecret(authorizationCode));
    if (!code || code.clientId !== client.client_id) throw new InvalidGrantError('The authorization code is invalid');
    return code.codeChallenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    authorizationCode: string,
    _verifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const hash = hashSecret(authorizationCode);
    const outcome = await inTransaction(this.db, async (trx): Promise<Exchange> => {
      // Locked, so two exchanges of one code cannot both succeed.
      const code = await repo.findCode(trx, hash, true);
      if (!code || code.clientId !== client.client_id) return { error: 'The authorization code is invalid' };
      if (code.usedAt !== null)
        return { error: 'The authorization code was already used', replayedGrant: code.grantId };
      if (code.expired) return { error: 'The authorization code has expired' };
      if (redirectUri !== undefined && redirectUri !== code.redirectUri)
        return { error: 'redirect_uri does not match the authorization request' };
      if (resource && code.resource !== null && resource.href !== code.resource)
        return { error: 'resource does not match the authorization request', target: true };
      const grantId = await repo.insertGrant(trx, {
        accountId: code.accountId,
        clientId: code.clientId,
        scopes: code.scopes,
        resource: code.resource,
      });
      await repo.markCodeUsed(trx, hash, grantId);
      return { tokens: await this.issue(trx, grantId, code.scopes) };
    });
    if ('tokens' in outcome) return outcome.tokens;
    if (outcome.target) throw new InvalidTargetError(outcome.error);
    // A code used twice was intercepted or replayed: what it issued is ended too (RFC 6749 4.1.2).
    if (outcome.replayedGrant) await this.endGrant(outcome.replayedGrant);
    throw new InvalidGrantError(outcome.error);
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const hash = hashSecret(refreshToken);
    const outcome = await inTransaction(this.db, async (trx): Promise<Exchange> => {
      const token = await repo.findToken(trx, hash, true);
      if (!token || token.kind !== 'refresh' || token.clientId !== client.client_id)
        return { error: 'The refresh token is invalid' };
      if (token.grantRevoked) return { error: 'The app was disconnected' };
      if (token.grantExpired)
        return { error: `The connection ended ${repo.GRANT_LIFETIME_DAYS} days after consent; connect the app again` };
      if (token.revoked) {
        // Locked above, so a concurrent second refresh waits for the first and reads what it stored.
        const again =
          token.successor && token.revokedSecondsAgo !== null && token.revokedSecondsAgo < REFRESH_GRACE_SECONDS
            ? openSuccessor(refreshToken, token.successor, token.revokedSecondsAgo)
            : undefined;
        return again
          ? { tokens: again }
          : { error: 'The refresh token was already used', replayedGrant: token.grantId };
      }
      if (token.expired) return { error: 'The refresh token has expired' };
      if (resource && token.resource !== null && resource.href !== token.resource)
        return { error: 'resource does not match the grant', target: true };
      const narrowed = scopes && scopes.length > 0 ? scopes : token.scopes;
      if (narrowed.some((s) => !token.scopes.includes(s)))
        return { error: `scope may only narrow the grant's: ${token.scopes.join(' ')}`, scope: true };
      const tokens = await this.issue(trx, token.grantId, narrowed);
      await repo.rotateToken(trx, hash, sealSuccessor(refreshToken, tokens));
      return { tokens };
    });
    if ('tokens' in outcome) return outcome.tokens;
    if (outcome.scope) throw new InvalidScopeError(outcome.error);
    if (outcome.target) throw new InvalidTargetError(outcome.error);
    // A spent refresh token used again was stolen or replayed: the whole grant ends (OAuth 2.1 4.3.1).
    if (outcome.replayedGrant) await this.endGrant(outcome.replayedGrant);
    throw new InvalidGrantError(outcome.error);
  }

  private async issue(
    trx: Parameters<typeof repo.insertToken>[0],
    grantId: string,
    scopes: string[],
  ): Promise<OAuthTokens> {
    const access = newSecret(OAUTH_ACCESS_PREFIX);
    const refresh = newSecret(OAUTH_REFRESH_PREFIX);
    await repo.insertToken(trx, {
      hash: hashSecret(access),
      grantId,
      kind: 'access',
      scopes,
      ttlSeconds: ACCESS_TOKEN_TTL_SECONDS,
    });
    await repo.insertToken(trx, {
      hash: hashSecret(refresh),
      grantId,
      kind: 'refresh',
      scopes,
      ttlSeconds: REFRESH_TOKEN_TTL_SECONDS,
    });
    return {
      access_token: access,
      token_type: 'Bearer',
      expires_in: ACCESS_TOKEN_TTL_SECONDS,
      refresh_token: refresh,
      scope: scopes.join(' '),
    };
  }

  /** Ends a grant and its tokens; this process stops accepting them at once, the others within a second. */
  async endGrant(grantId: string, accountId?: string): Promise<boolean> {
    const ended = await repo.revokeGrant(this.o.db, grantId, accountId);
    forgetCredential(grantId);
    return ended;
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    return toAuthInfo(token, await this.o.credentials.bearer(token));
  }

  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const token = await repo.findToken(this.db, hashSecret(request.token));
    // RFC 7009: an unknown token, or another client's, is answered 200 all the same.
    if (!token || token.clientId !== client.client_id) return;
    if (token.kind === 'refresh') await this.endGrant(token.grantId);
    else {
      await repo.revokeToken(this.db, hashSecret(request.token));
      forgetCredential(token.grantId);
    }
  }
}
