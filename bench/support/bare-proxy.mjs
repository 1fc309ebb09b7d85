// The floors a gateway is measured against, plain JavaScript run by plain node like the built gateway, so that
// memory compares too.
//
// `node bare-proxy.mjs http UPSTREAM_URL PACED_URL`: the same HTTP layers as `parley serve` (node:http in front,
// undici's pooled Agent behind, driven through its dispatch handlers), the request body parsed as JSON once,
// the answer's bytes written back as they come, with no conversion at all. `POST /paced/...` goes to the paced
// upstream. What Parley costs above it is its own work.
//
// `node bare-proxy.mjs tcp UPSTREAM_URL`: a TCP relay, each client connection piped to a connection of its own
// to the upstream, no HTTP parsing at all. What Node costs to move the bytes through one process.
import { createServer as createHttpServer } from "node:http";
import { connect, createServer as createTcpServer } from "node:net";
import { Agent } from "undici";

const [mode, upstreamUrl, pacedUrl] = process.argv.slice(2);

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (part) => chunks.push(part));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

function httpProxy() {
  const agent = new Agent({ keepAliveTimeout: 30_000 });
  return createHttpServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
    const body = await readBody(req);
    JSON.parse(body);
    const target = new URL(req.url?.startsWith("/paced/") ? pacedUrl : upstreamUrl);
    agent.dispatch(
      {
        origin: target.origin,
        path: target.pathname,
        method: "POST",
        headers: { "content-type": "application/json" },
        body,
      },
      {
        onConnect() {},
        onHeaders(status, rawHeaders, resume) {
          let contentType = "";
          for (let index = 0; index < rawHeaders.length; index += 2) {
            if (rawHeaders[index].toString("latin1").toLowerCase() === "content-type")
              contentType = rawHeaders[index + 1].toString("latin1");
          }
          res.writeHead(status, { "content-type": contentType });
          res.on("drain", resume);
          return true;
        },
        onData: (chunk) => res.write(chunk),
        onComplete: () => res.end(),
        onError: (error) => res.destroy(error),
      },
    );
  });
}

function tcpRelay() {
  const target = new URL(upstreamUrl);
  return createTcpServer((client) => {
    const upstream = connect(Number(target.port), target.hostname);
    client.pipe(upstream);
    upstream.pipe(client);
    client.on("error", () => upstream.destroy());
    upstream.on("error", () => client.destroy());
  });
}

const server = mode === "tcp" ? tcpRelay() : httpProxy();
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`bare proxy on http://127.0.0.1:${server.address().port}\n`);
});
process.once("SIGTERM", () => {
  server.close();
  process.exit(0);
});
