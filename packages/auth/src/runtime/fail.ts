/** A process that cannot go on (a service that fails to start, an admin command that fails): one line on stderr, exit 1. */
export function fail(prefix: string, err: unknown): never {
  process.stderr.write(`${prefix}: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
}
