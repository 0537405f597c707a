// The one process entry of every service, driven by its declaration (apps/<svc>/dist/service.js):
//   node <auth>/dist/runtime/main.js serve <service.js>
//   node <auth>/dist/runtime/main.js admin <service.js> <command> [--flags]
// Only the declaration (data) and tracing load before tracing starts: express, pg and ioredis
// must load after it, so the runtime and the app are imported once it has. The admin command
// loads neither tracing nor the app.
import { resolve } from 'node:path';
import type { ServiceDeclaration } from './declaration.js';

const USAGE = 'usage: main.js serve <service.js> | main.js admin <service.js> <command> [--flags]';

async function main(verb: string | undefined, file: string | undefined, argv: string[]): Promise<void> {
  if ((verb !== 'serve' && verb !== 'admin') || !file) throw new Error(USAGE);
  // A built declaration is CommonJS, as the whole workspace is: its default export is `exports.default`.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- a file named on the command line
  const service = (require(resolve(file)) as { default: ServiceDeclaration }).default;
  if (verb === 'serve') {
    // Off unless OTEL_EXPORTER_OTLP_ENDPOINT is set.
    await (await import('./tracing.js')).startTracing(service.name);
    const [{ runService }, module] = await Promise.all([import('./service.js'), service.load()]);
    runService(service, module);
  } else {
    // Not traced, and without the app: the schema and the commands load in a fraction of its time.
    const [{ runAdmin }, module] = await Promise.all([import('./admin.js'), service.loadAdmin()]);
    runAdmin(service, module, argv);
  }
}

const [verb, file, ...argv] = process.argv.slice(2);
main(verb, file, argv).catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(2);
});
