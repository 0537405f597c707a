import { errors } from '@app/http-errors';

// How meetings speaks to tasks as its OAuth client: only tasks' public endpoints (its
// authorization server under /oauth/tasks and its REST API), never its schema.

/** What a call to tasks waits at most before meetings answers 503. */
const TIMEOUT_MS = 5000;
/** When a 503 for an unreachable tasks says to retry. */
const TASKS_RETRY_AFTER_SECONDS = 5;

/** The scopes meetings asks tasks for: reading its tasks' changes, creating, completing and reopening them. */
export const TASKS_SCOPES = 'tasks:read tasks:write';

/**
 * `TASKS_URL`: the origin meetings reaches tasks at (its authorization server and API). Unset:
 * the origin the account's browser reached meetings through, which in the dev stack and under
 * one gateway is tasks' too.
 */
export function tasksUrlSetting(env: NodeJS.ProcessEnv): string | undefined {
  const raw = env.TASKS_URL?.trim();
  if (!raw) return undefined;
  const url = new URL(raw);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('TASKS_URL must be an http(s) URL');
  return url.origin;
}

export const tasksOAuth = (tasksUrl: string) => ({
  issuer: `${tasksUrl}/oauth/tasks`,
  authorize: `${tasksUrl}/oauth/tasks/authorize`,
  token: `${tasksUrl}/oauth/tasks/token`,
  revoke: `${tasksUrl}/oauth/tasks/revoke`,
});

/** 503 with Retry-After: tasks did not answer (or answered 5xx); nothing was changed here. */
export const tasksUnavailable = () => errors.serviceUnavailable(TASKS_RETRY_AFTER_SECONDS);

export interface TasksAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

/** One request to tasks; a network failure, a timeout or a 5xx is {@link tasksUnavailable}. */
async function callTasks(
  url: string,
  init: { method: string; headers?: Record<string, string>; body?: string },
): Promise<TasksAnswer> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, redirect: 'manual', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch {
    throw tasksUnavailable();
  }
  if (res.status >= 500) throw tasksUnavailable();
  const text = await res.text().catch(() => '');
  let body: Record<string, unknown> | null = null;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : null;
  } catch {
    body = null;
  }
  return { status: res.status, body };
}

/** A form POST to tasks' token or revocation endpoint. */
export const postForm = (url: string, fields: Record<string, string>) =>
  callTasks(url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Accept: 'application/json' },
    body: new URLSearchParams(fields).toString(),
  });

/** A call to tasks' REST API with the connection's access token (JSON in and out). */
export const callTasksApi = (
  access: { token: string; tasksUrl: string },
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
) =>
  callTasks(`${access.tasksUrl}${path}`, {
    method,
    headers: {
      Authorization: `Bearer ${access.token}`,
      Accept: 'application/json',
      ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
