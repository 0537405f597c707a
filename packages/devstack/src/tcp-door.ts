import { connect, createServer, type AddressInfo, type Socket } from 'node:net';

/** What a {@link TcpDoor} does with a new connection. */
export type DoorState = { open: false } | { open: true; delayMs?: number };

export interface TcpDoor {
  /** `target`'s URL with the door's port: a client given it connects through the door. */
  url: string;
  /** Shut: every new connection is reset. Open: relayed to the target, after `delayMs` if given. */
  set(state: DoorState): void;
  /** Connections it has taken so far, reset or relayed. */
  readonly connections: number;
  /** Ends every relayed connection and stops listening. */
  close(): Promise<void>;
}

/**
 * A TCP relay on 127.0.0.1 in front of the server at `target` (a postgres:// URL, say), for tests
 * of a client whose server refuses it (a database not up yet) or is slow to accept it (a loaded
 * machine). Connections already relayed stay relayed whatever the state becomes.
 */
export async function tcpDoor(target: string, initial: DoorState): Promise<TcpDoor> {
  const { hostname, port } = new URL(target);
  let state = initial;
  let connections = 0;
  const sockets = new Set<Socket>();
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
  };
  const server = createServer((client) => {
    connections++;
    track(client);
    if (!state.open) return void client.resetAndDestroy();
    const relay = () => {
      if (client.destroyed) return;
      const upstream = connect(Number(port), hostname);
      track(upstream);
      upstream.on('close', () => client.destroy());
      client.on('close', () => upstream.destroy());
      client.pipe(upstream).pipe(client);
    };
    if (state.delayMs) setTimeout(relay, state.delayMs);
    else relay();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(target);
  url.port = String((server.address() as AddressInfo).port);
  return {
    url: url.toString(),
    get connections() {
      return connections;
    },
    set: (next) => (state = next),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
