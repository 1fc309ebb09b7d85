import { once } from "node:events";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";

/**
 * A loopback port where a connection is refused for as long as it is held: the local port of a connection this
 * opens to a server of its own. Nothing listens on it, and while that connection holds it the system gives it
 * to no server listening on port 0 (a port found free and closed again could be, by a test running beside).
 */
export async function refusingPort(): Promise<{ port: number; release(): Promise<void> }> {
  const accepted: Socket[] = [];
  const server = createServer((socket) => accepted.push(socket));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const client = connect((server.address() as AddressInfo).port, "127.0.0.1");
  await once(client, "connect");
  return {
    port: client.localPort!,
    async release() {
      client.destroy();
      for (const socket of accepted) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
