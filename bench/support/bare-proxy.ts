import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { pathToFileURL } from "node:url";
import { Agent, request } from "undici";

/**
 * The floor a gateway cannot go below on this machine: node:http in front, undici's pool behind, the request
 * body read and parsed as JSON once, the answer's bytes piped back as they come, with no conversion at all.
 * `parley serve` measured against it shows what Parley's own work costs, apart from Node's HTTP machinery.
 * `POST /paced/...` goes to the paced upstream, any other POST to the plain one.
 */
export async function startBareProxy(upstreamUrl: string, pacedUrl: string): Promise<{ url: string; close(): void }> {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  const server: Server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    const body = await readBody(req);
    JSON.parse(body);
    const target = req.url?.startsWith("/paced/") ? pacedUrl : upstreamUrl;
    const upstream = await request(target, {
      dispatcher: agent,
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    res.writeHead(upstream.statusCode, { "content-type": String(upstream.headers["content-type"] ?? "") });
    for await (const chunk of upstream.body) res.write(chunk);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, close: () => server.close() };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on("data", (part: Buffer) => chunks.push(part));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

// Run as its own process, pinned like the gateway: `bare-proxy.ts UPSTREAM_URL PACED_URL`.
if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const proxy = await startBareProxy(process.argv[2]!, process.argv[3]!);
  process.stdout.write(`bare proxy on ${proxy.url}\n`);
  process.once("SIGTERM", () => {
    proxy.close();
    process.exit(0);
  });
}
