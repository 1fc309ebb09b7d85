// The floor a gateway cannot go below on this machine: node:http in front, undici's pool behind, the request
// body read and parsed as JSON once, the answer's bytes piped back as they come, with no conversion at all.
// `parley serve` measured against it shows what Parley's own work costs, apart from Node's HTTP machinery.
// Plain JavaScript, run by plain node like the built gateway, so that its memory compares fairly.
// Usage: `node bare-proxy.mjs UPSTREAM_URL PACED_URL`; `POST /paced/...` goes to the paced upstream.
import { createServer } from "node:http";
import { Agent, request } from "undici";

const [upstreamUrl, pacedUrl] = process.argv.slice(2);
const agent = new Agent({ keepAliveTimeout: 30_000 });

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    req.on("data", (part) => chunks.push(part));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

const server = createServer({ keepAliveTimeout: 65_000 }, async (req, res) => {
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

server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`bare proxy on http://127.0.0.1:${server.address().port}\n`);
});
process.once("SIGTERM", () => {
  server.close();
  process.exit(0);
});
