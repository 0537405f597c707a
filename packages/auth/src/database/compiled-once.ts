import type { CompiledQuery, Kysely, RawBuilder } from 'kysely';
import type { AnySchema } from './database.js';

/** Where a call's value goes in a statement built once: one parameter of its compiled text. */
class Slot {
  constructor(readonly name: string) {}
}

/** Stand-ins for every value of `V`: `values.title` is the slot of the call's `title`. */
const slotsOf = <V extends object>(): V => new Proxy({}, { get: (_target, name) => new Slot(String(name)) }) as V;

/**
 * A statement built and compiled by kysely once, then only bound to each call's values. `build`
 * gets stand-ins for the values (each becomes one parameter of the text); anything it computes
 * itself is fixed by the first call, so whatever differs between calls must come in as a value,
 * and a statement of another shape (a clause present or not) is a statement of its own.
 *
 * Kysely builds its operation tree and the text of a statement on every call; for the one-statement
 * keyed create (about fifty parameters and a dozen fragments) that was a tenth of the request's
 * CPU, and the fresh text cost the prepared-statement lookup a hash of its 3 KB besides
 * (docs/benchmarks.md, "The keyed create's CPU"). The same text each call is one string, hashed once.
 */
export function compiledOnce<V extends object, R>(
  build: (values: V) => RawBuilder<R>,
): (db: Kysely<AnySchema>, values: V) => CompiledQuery<R> {
  let compiled: CompiledQuery<R> | undefined;
  return (db, values) => {
    compiled ??= build(slotsOf<V>()).compile(db);
    const parameters = compiled.parameters.map((p) =>
      p instanceof Slot ? (values as Record<string, unknown>)[p.name] : p,
    );
    return { ...compiled, parameters };
  };
}
