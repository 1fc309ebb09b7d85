// Records request/answer pairs from the real llama-server (built and cached by ensure-server.mjs, on the tiny
// model) into test/fixtures/llamacpp-server/, for the mock tests: each file holds the server's version, the request
// and the answer as it came (status, content type, and the JSON body or the SSE text). Ids, timestamps and timings
// vary from run to run; everything else is the same bytes each run.
//
//   node scripts/llamacpp/record-fixtures.mjs
import { spawn } from "node:child_process";
import { writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureLlamaServer } from "./ensure-server.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const OUT = join(here, "..", "..", "test", "fixtures", "llamacpp-server");
const ALIAS = "tiny-qwen3";

const weather = {
  type: "function",
  function: {
    name: "weather",
    description: "Current weather at a location",
    parameters: {
      type: "object",
      properties: { location: { type: "string", maxLength: 12 } },
      required: ["location"],
    },
  },
};
const question = [{ role: "user", content: "What is the weather in Paris?" }];

/** file name -> [method, path, body] */
const EXCHANGES = {
  "models.json": ["GET", "/v1/models"],
  "chat-reasoning.json": ["POST", "/v1/chat/completions", { model: ALIAS, messages: question, max_tokens: 64 }],
  "chat-reasoning-tool-call.sse": [
    "POST",
    "/v1/chat/completions",
    {
      model: ALIAS,
      messages: question,
      tools: [weather],
      max_tokens: 128,
      stream: true,
      stream_options: { include_usage: true },
    },
  ],
  // cut by max_tokens inside its thinking: reasoning only, no content
  "chat-reasoning-only-cut.json": ["POST", "/v1/chat/completions", { model: ALIAS, messages: question, max_tokens: 5 }],
  // cut by max_tokens inside the call's JSON: streamed, the call's first pieces came (whole, it is left out)
  "chat-tool-call-cut.sse": [
    "POST",
    "/v1/chat/completions",
    { model: ALIAS, messages: question, tools: [weather], max_tokens: 22, stream: true },
  ],
  "chat-exceeds-context.json": [
    "POST",
    "/v1/chat/completions",
    { model: ALIAS, messages: [{ role: "user", content: "hello ".repeat(2500) }], max_tokens: 8 },
  ],
  "chat-image-without-projector.json": [
    "POST",
    "/v1/chat/completions",
    {
      model: ALIAS,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "What is this?" },
            {
              type: "image_url",
              image_url: {
                url: "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
              },
            },
          ],
        },
      ],
      max_tokens: 8,
    },
  ],
  "messages-reasoning.sse": [
    "POST",
    "/v1/messages",
    { model: ALIAS, max_tokens: 64, stream: true, messages: question },
  ],
  "responses-reasoning.sse": ["POST", "/v1/responses", { model: ALIAS, input: question, stream: true }],
};

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

async function waitForHealth(origin) {
  for (let attempt = 0; attempt < 600; attempt++) {
    try {
      const response = await fetch(`${origin}/health`);
      if (response.status === 200) return;
    } catch {}
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`llama-server did not answer ${origin}/health`);
}

const build = await ensureLlamaServer();
const port = await freePort();
const origin = `http://127.0.0.1:${port}`;
const args = ["-m", build.model, "--host", "127.0.0.1", "--port", String(port), "-c", "2048", "-np", "1", "-t", "2"];
args.push("--seed", "7", "--alias", ALIAS, "--no-webui", "--offline", "--reasoning-format", "deepseek");
const child = spawn(build.binary, args, { stdio: "ignore" });
try {
  await waitForHealth(origin);
  const version = await new Promise((resolve, reject) => {
    const probe = spawn(build.binary, ["--version"], { stdio: ["ignore", "pipe", "pipe"] });
    let text = "";
    probe.stdout.on("data", (chunk) => (text += chunk));
    probe.stderr.on("data", (chunk) => (text += chunk));
    probe.on("error", reject);
    probe.on("close", () => resolve(/version: (.*)/.exec(text)?.[1] ?? "unknown"));
  });
  const server = {
    name: "llama.cpp llama-server",
    version,
    source: `${build.version} (llama/gitRelease.bundle), commit ${build.commit}`,
    model: "the project's tiny generated model (scripts/llamacpp/tiny-model.py)",
    flags: args.slice(4).join(" ").replace(build.model, "<model>"),
  };
  for (const [file, [method, path, body]] of Object.entries(EXCHANGES)) {
    const response = await fetch(`${origin}${path}`, {
      method,
      headers: body === undefined ? {} : { "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const contentType = response.headers.get("content-type") ?? "";
    const answer = { status: response.status, contentType };
    if (file.endsWith(".sse")) {
      writeFileSync(join(OUT, file), text);
      writeFileSync(
        join(OUT, file.replace(/\.sse$/, ".request.json")),
        `${JSON.stringify({ server, request: { method, path, body }, response: { ...answer, bodyFile: file } }, null, 2)}\n`,
      );
    } else {
      const record = { server, request: { method, path, ...(body === undefined ? {} : { body }) } };
      record.response = { ...answer, body: JSON.parse(text) };
      writeFileSync(join(OUT, file), `${JSON.stringify(record, null, 2)}\n`);
    }
    process.stderr.write(`${file}: ${response.status}\n`);
  }
} finally {
  child.kill("SIGTERM");
}
