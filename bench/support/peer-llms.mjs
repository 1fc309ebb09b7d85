// Runs @musistudio/llms (the translation server inside claude-code-router) in front of one OpenAI-compatible
// upstream, as the research anchors measured it: its CJS build (the ESM one fails on Node 20), logger off.
// Usage: node peer-llms.mjs PACKAGE_FOLDER UPSTREAM_CHAT_COMPLETIONS_URL. Clients name the model "mock,mock-model".
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";

const [folder, upstreamUrl] = process.argv.slice(2);
const require = createRequire(join(folder, "package.json"));
const Server = require("@musistudio/llms").default;

// llms takes a fixed port: borrow a free one from the kernel first.
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
const server = new Server({
  logger: false,
  initialConfig: {
    providers: [{ name: "mock", api_base_url: upstreamUrl, api_key: "sk-mock", models: ["mock-model"] }],
    HOST: "127.0.0.1",
    PORT: String(port),
    LOG: false,
  },
});
await server.start();
process.stdout.write(`peer on http://127.0.0.1:${port}\n`);
