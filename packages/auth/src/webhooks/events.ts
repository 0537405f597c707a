import { randomUUID } from 'node:crypto';
import { CompiledQuery, sql, type RawBuilder } from 'kysely';
import type { AnyDb } from '../database/database.js';
import { currentActor, type Actor } from './actor.js';
import { activeTraceparent } from './trace-links.js';

/** What a service declares: each event type it emits and the read scope its resource needs. */
export type EventCatalog = Readonly<Record<string, string>>;

/** A new event id (`webhook-id`): the same on every retry and for every subscription. */
export const newEventId = (): string => `msg_${randomUUID().replace(/-/g, '')}`;

/**
 * One event of a write: its resource as the REST API returns it to an API key, who made the
 * change (the request's caller unless given) and, for an update, `previous`: the value before of
 * each field it changed (see previousOf).
 */
export interface EventInput {
  type: string;
  data: unknown;
  actor?: Actor;
  previous?: Record<string, unknown>;
}

/** The delivered body: `{type, timestamp, actor, data, previous?}`, kept as sent so every retry signs the same bytes. */
export const eventBody = (type: string, data: unknown, actor = currentActor(), previous?: object): string =>
  JSON.stringify({ type, timestamp: new Date().toISOString(), actor, data, ...(previous && { previous }) });

// The write's trace context (W3C traceparent, null when tracing is off) goes with its event in
// the same statement, so the delivery's span can link to the request that emitted it.
const EMIT = 'select webhook_emit($1, $2, $3, $4, $5)';

/**
 * A condition that holds while `accountId` has no subscription to any of `types` (a disabled one
 * counts: its events are kept for a replay): a write
 * that carries it in its WHERE can run on its own, outside a transaction, because
 * {@link emitEvent} would record nothing for it (the same snapshot decides both). When it does
 * not hold the write touches nothing, and the caller makes the change the usual way, in a
 * transaction with its event. Uncorrelated, so Postgres tests it once, before the write (a
 * one-time filter).
 */
export function noSubscriberFor(accountId: string, ...types: string[]): RawBuilder<boolean> {
  return sql<boolean>`not exists (select from webhook_subscriptions s where s.account_id = ${accountId} and s.events && ${types}::text[])`;
}

/**
 * Records an event for every subscription of `accountId` to `type` (pending for an enabled one,
 * skipped for a disabled one: kept 7 days for a replay). Call it with the transaction that makes the change, so the event commits (or not) with it.
 * `data` is the resource as the REST API returns it to an API key.
 */
export function emitEvent(
  trx: AnyDb,
  accountId: string,
  type: string,
  data: unknown,
  previous?: Record<string, unknown>,
): Promise<void> {
  return emitOne(trx, accountId, { type, data, previous });
}

async function emitOne(trx: AnyDb, accountId: string, e: EventInput): Promise<void> {
  const body = eventBody(e.type, e.data, e.actor ?? currentActor(), e.previous);
  await trx.executeQuery(CompiledQuery.raw(EMIT, [accountId, e.type, newEventId(), body, activeTraceparent()]));
}

/**
 * {@link emitEvent} as an expression, for a statement that makes the resource itself and records
 * its event in its select list (one round trip less): `data` is the resource's
 * JSON text as the statement builds it (as the REST API returns it), so the resource and its event
 * are one statement, one round trip. The body is byte for byte what {@link eventBody} writes.
 * Its value: the deliveries recorded (0 when nobody subscribes).
 */
export function emitEventWithData(
  accountId: string,
  type: string,
  data: RawBuilder<string>,
  stamp: EventStamp = eventStamp(type),
): RawBuilder<number> {
  return sql<number>`webhook_emit(${accountId}::uuid, ${type}::text, ${stamp.id}::text, ${stamp.head}::text || ',"data":' || ${data} || '}', ${stamp.trace}::text)`;
}

/** What an event made by {@link emitEventWithData} takes from the moment it is made: its id, the body's head (`{"type":…,"timestamp":…,"actor":…`), the trace it links to. */
export interface EventStamp {
  id: string;
  head: string;
  trace: string | null;
}

/** The {@link EventStamp} of an event of `type` made now, by the current actor. */
export const eventStamp = (type: string): EventStamp => ({
  id: newEventId(),
  head: JSON.stringify({ type, timestamp: new Date().toISOString(), actor: currentActor() }).slice(0, -1),
  trace: activeTraceparent(),
});

const EMIT_MANY =
  'select webhook_emit($1, t.type, t.id, t.body, $5) from unnest($2::text[], $3::text[], $4::text[]) with ordinality as t(type, id, body, n) order by t.n';

/** {@link emitEvent} for several events of one account, in this order, in one statement. */
export async function emitEvents(trx: AnyDb, accountId: string, events: readonly EventInput[]): Promise<void> {
  if (events.length === 0) return;
  if (events.length === 1) return emitOne(trx, accountId, events[0]!);
  await trx.executeQuery(
    CompiledQuery.raw(EMIT_MANY, [
      accountId,
      events.map((e) => e.type),
      events.map(() => newEventId()),
      events.map((e) => eventBody(e.type, e.data, e.actor ?? currentActor(), e.previous)),
      activeTraceparent(),
    ]),
  );
}
