import { AsyncLocalStorage } from 'node:async_hooks';
import type { Caller } from '../identity/middleware.js';

/**
 * Who made a change, as every event's payload names it: an API key, a browser session, a
 * connected app (its grant) or the service itself (`system`, its id naming the cause: a recurring
 * job's name, a linked service).
 */
export interface Actor {
  type: 'key' | 'session' | 'oauth' | 'system';
  id: string;
}

const actors = new AsyncLocalStorage<Actor>();

/** The actor of a change made outside any request and any {@link runAs}. */
const SYSTEM: Actor = { type: 'system', id: 'system' };

/** The actor of a request's caller: an OAuth access token acts for its grant. */
export const actorOf = (caller: Caller): Actor => ({
  type: caller.oauth ? 'oauth' : caller.kind,
  id: caller.credentialId,
});

/** Runs `fn` with `actor` as the actor of every event it records (a request, a recurring job). */
export const runAs = <T>(actor: Actor, fn: () => T): T => actors.run(actor, fn);

/** The actor of the change being made here: the request's caller, else the system. */
export const currentActor = (): Actor => actors.getStore() ?? SYSTEM;

/**
 * What an update event carries as `previous`: the value before of each field of `after` that the
 * change changed, and only those. `updatedAt` and `revision` are left out: they change with every
 * write and say nothing of what changed.
 */
const VERSIONS = new Set(['updatedAt', 'revision']);

export function previousOf(before: object, after: object): Record<string, unknown> {
  const previous: Record<string, unknown> = {};
  const old = before as Record<string, unknown>;
  for (const [field, value] of Object.entries(after))
    if (!VERSIONS.has(field) && JSON.stringify(old[field]) !== JSON.stringify(value))
      previous[field] = old[field] ?? null;
  return previous;
}
