import { createHash, randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import { openValue, sealValue, type SecretKeys } from '@app/auth/webhooks';
import {
  deleteConnection,
  findConnection,
  insertStart,
  saveConnection,
  saveTokens,
  takeStart,
  type ConnectionRow,
} from '../db/connections.repository.js';
import type { Database } from '../db/schema.js';
import { fail } from './errors.js';
import { postForm, TASKS_SCOPES, tasksOAuth, tasksUnavailable } from './tasks-link.js';

/** Where meetings serves its Client ID Metadata Document and takes tasks' answer, under its origin. */
export const CONNECTION_PATHS = {
  clientDocument: '/api/me/connections/tasks/client.json',
  callback: '/api/me/connections/tasks/callback',
};

/** An access token this close to its expiry is refreshed first. */
const REFRESH_MARGIN_MS = 60_000;

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');
const binding = (accountId: string, column: 'access_token' | 'refresh_token') =>
  `task_connections.${column}:${accountId}`;

/** Meetings as tasks' OAuth client (DESIGN "Meetings: connected"), identified by the document it serves. */
export function clientDocument(meetingsOrigin: string) {
  return {
    client_id: `${meetingsOrigin}${CONNECTION_PATHS.clientDocument}`,
    client_name: 'Meetings',
    client_uri: `${meetingsOrigin}/account/meetings`,
    redirect_uris: [`${meetingsOrigin}${CONNECTION_PATHS.callback}`],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
    scope: TASKS_SCOPES,
  };
}

interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}
const isTokenAnswer = (body: Record<string, unknown> | null): body is Record<string, unknown> & TokenAnswer =>
  typeof body?.access_token === 'string' &&
  typeof body.refresh_token === 'string' &&
  typeof body.expires_in === 'number';

export class ConnectionsService {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly keys: SecretKeys,
  ) {}

  /** Records a PKCE verifier and a state for the account; the URL of tasks' consent to send the browser to. */
  async start(accountId: string, meetingsOrigin: string, tasksUrl: string): Promise<string> {
    const doc = clientDocument(meetingsOrigin);
    const state = randomBytes(32).toString('base64url');
    const verifier = randomBytes(32).toString('base64url');
    await insertStart(this.db, {
      state_hash: sha256(state),
      account_id: accountId,
      tasks_url: tasksUrl,
      client_id: doc.client_id,
      redirect_uri: doc.redirect_uris[0]!,
      verifier,
    });
    const query = new URLSearchParams({
      response_type: 'code',
      client_id: doc.client_id,
      redirect_uri: doc.redirect_uris[0]!,
      scope: TASKS_SCOPES,
      state,
      code_challenge: sha256(verifier),
      code_challenge_method: 'S256',
    });
    return `${tasksOAuth(tasksUrl).authorize}?${query.toString()}`;
  }

  /**
   * Tasks' answer at the callback: the code exchanged for tokens (stored sealed), or the user's
   * refusal. A state that is unknown, spent, older than 10 minutes or another account's is 400
   * `invalid_connection_state`; an answer from another issuer (RFC 9207 `iss`) too.
   */
  async finish(accountId: string, query: Record<string, unknown>): Promise<'connected' | 'denied'> {
    const state = typeof query.state === 'string' ? query.state : '';
    const started = state ? await takeStart(this.db, accountId, sha256(state)) : undefined;
    if (!started)
      throw fail('invalid_connection_state', 'This answer matches no connection request under way; start again');
    if (query.iss !== undefined && query.iss !== tasksOAuth(started.tasks_url).issuer)
      throw fail('invalid_connection_state', 'The answer came from another authorization server');
    if (typeof query.code !== 'string') return 'denied';
    const answer = await postForm(tasksOAuth(started.tasks_url).token, {
      grant_type: 'authorization_code',
      code: query.code,
      code_verifier: started.verifier,
      redirect_uri: started.redirect_uri,
      client_id: started.client_id,
    });
    if (answer.status !== 200 || !isTokenAnswer(answer.body))
      throw fail('invalid_connection_state', 'Tasks did not accept the authorization code; start again');
    await saveConnection(this.db, {
      account_id: accountId,
      tasks_url: started.tasks_url,
      client_id: started.client_id,
      ...this.sealed(accountId, answer.body),
    });
    return 'connected';
  }

  async status(accountId: string) {
    const row = await findConnection(this.db, accountId);
    return { tasks: { connected: row !== undefined, since: row?.connected_at ?? null } };
  }

  /** Ends the grant at tasks (RFC 7009 on the refresh token), then forgets the tokens. Tasks unreachable: 503, nothing forgotten. */
  async disconnect(accountId: string) {
    const row = await findConnection(this.db, accountId);
    if (row) {
      const refreshToken = openValue(this.keys, binding(accountId, 'refresh_token'), row.refresh_token);
      const answer = await postForm(tasksOAuth(row.tasks_url).revoke, {
        token: refreshToken,
        token_type_hint: 'refresh_token',
        client_id: row.client_id,
      });
      // RFC 7009: 200 whether or not the token was still valid; anything else, the grant may live on.
      if (answer.status !== 200) throw tasksUnavailable();
      await deleteConnection(this.db, accountId);
    }
    return this.status(accountId);
  }

  /**
   * A valid access token of the account's connection and where tasks is, refreshed first when it
   * is about to expire; null when there is no connection (or tasks ended the grant: then it is forgotten).
   */
  async access(accountId: string): Promise<{ token: string; tasksUrl: string } | null> {
    const row = await findConnection(this.db, accountId);
    if (!row) return null;
    if (Date.parse(row.access_expires_at) - REFRESH_MARGIN_MS > Date.now())
      return {
        token: openValue(this.keys, binding(accountId, 'access_token'), row.access_token),
        tasksUrl: row.tasks_url,
      };
    return this.refresh(row);
  }

  private async refresh(row: NonNullable<ConnectionRow>) {
    const answer = await postForm(tasksOAuth(row.tasks_url).token, {
      grant_type: 'refresh_token',
      refresh_token: openValue(this.keys, binding(row.account_id, 'refresh_token'), row.refresh_token),
      client_id: row.client_id,
    });
    if (answer.status === 400 && answer.body?.error === 'invalid_grant') {
      await deleteConnection(this.db, row.account_id);
      return null;
    }
    if (answer.status !== 200 || !isTokenAnswer(answer.body)) throw tasksUnavailable();
    await saveTokens(this.db, row.account_id, this.sealed(row.account_id, answer.body));
    return { token: answer.body.access_token, tasksUrl: row.tasks_url };
  }

  private sealed(accountId: string, tokens: TokenAnswer) {
    return {
      access_token: sealValue(this.keys, binding(accountId, 'access_token'), tokens.access_token),
      refresh_token: sealValue(this.keys, binding(accountId, 'refresh_token'), tokens.refresh_token),
      access_expires_at: new Date(Date.now() + tokens.expires_in * 1000).toISOString(),
    };
  }
}
