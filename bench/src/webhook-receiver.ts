/*
 * The webhook scenario's receiver, in a process of its own (forked by webhooks.bench.ts) so its
 * work does not slow the load generator: answers 204 at once, keeps each event's lag from its
 * commit (the payload's timestamp), reports them when asked over IPC.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const lags: number[] = [];
const ids = new Set<string>();
const server = createServer((req, res) => {
  let body = '';
  req.setEncoding('utf8');
  req.on('data', (c: string) => (body += c));
  req.on('end', () => {
    const id = String(req.headers['webhook-id']);
    if (!ids.has(id)) {
      ids.add(id);
      lags.push(Date.now() - Date.parse((JSON.parse(body) as { timestamp: string }).timestamp));
    }
    res.statusCode = 204;
    res.end();
  });
});
server.keepAliveTimeout = 65_000;
server.listen(0, '127.0.0.1', () => process.send!({ port: (server.address() as AddressInfo).port }));
process.on('message', () => process.send!({ delivered: ids.size, lags }));
process.on('disconnect', () => process.exit(0));
