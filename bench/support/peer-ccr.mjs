// Runs @musistudio/claude-code-router 2.0.0 (`ccr start`, its server in the foreground) in front of one
// OpenAI-compatible upstream, configured as the research anchors measured it: one provider, `Router.default`,
// LOG false, NON_INTERACTIVE_MODE, telemetry off, under a HOME of its own. It runs in this process (its CLI is
// one bundled CommonJS file), so that this process's pid is the server's for /proc.
// Usage: node peer-ccr.mjs PACKAGE_FOLDER UPSTREAM_CHAT_COMPLETIONS_URL SCRATCH_HOME.
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer } from "node:net";
import { join } from "node:path";

const [folder, upstreamUrl, home] = process.argv.slice(2);

// ccr takes a fixed port from its config: borrow a free one from the kernel first.
const port = await new Promise((resolve) => {
  const probe = createServer().listen(0, "127.0.0.1", () => {
    const { port } = probe.address();
    probe.close(() => resolve(port));
  });
});
mkdirSync(join(home, ".claude-code-router"), { recursive: true });
writeFileSync(
  join(home, ".claude-code-router", "config.json"),
  JSON.stringify({
    PORT: port,
    HOST: "127.0.0.1",
    LOG: false,
    NON_INTERACTIVE_MODE: true,
    Providers: [{ name: "mock", api_base_url: upstreamUrl, api_key: "sk-mock", models: ["mock-model"] }],
    Router: { default: "mock,mock-model" },
  }),
);
process.env.HOME = home;
process.env.DISABLE_TELEMETRY = "1";
// Its own output ("Loaded JSON config from ...") would interleave with the ready line below.
const ready = process.stdout.write.bind(process.stdout);
process.stdout.write = () => true;
process.argv = [process.argv[0], join(folder, "node_modules/@musistudio/claude-code-router/dist/cli.js"), "start"];
createRequire(join(folder, "package.json"))("@musistudio/claude-code-router/dist/cli.js");

// It prints no line once listening: ask until it answers.
for (let attempt = 0; attempt < 400; attempt++) {
  try {
    await fetch(`http://127.0.0.1:${port}/`);
    ready(`peer on http://127.0.0.1:${port}\n`);
    break;
  } catch {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
