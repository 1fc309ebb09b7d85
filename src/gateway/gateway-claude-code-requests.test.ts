import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readClaudeCodeFixtures } from "../../test/support/claude-code-fixtures.js";
import { type Json, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Each Claude Code release's recorded first request (`test/fixtures/claude-code/`), sent as the release sent it
 * to the gateway in front of a generic OpenAI-compatible upstream: nothing in it is lost without being reported
 * in `x-parley-lossy`, and no Anthropic-only field or block reaches the upstream. A new release is one fixture
 * away from these checks (see `test/e2e/claude-code.test.ts` for recording one).
 */

interface LossyEntry {
  code: string;
  message: string;
  path?: string;
}

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  const chunk = (delta: object, finish: string | null) => ({
    id: "chatcmpl-cc",
    object: "chat.completion.chunk",
    created: 1,
    model: "scripted",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  upstream.fallback = () => ({
    kind: "sse",
    frames: openaiFrames([chunk({ role: "assistant", content: "Ready." }, null), chunk({}, "stop")]),
  });
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream, preset: "generic" } },
    routes: [{ match: "*", provider: "local", model: "scripted" }],
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const fixtures = readClaudeCodeFixtures();

test("every release the end-to-end test runs has its recorded first request", () => {
  expect(fixtures.map((fixture) => fixture.release)).toEqual(["2.1.129", "2.1.160", "2.1.330", "2.1.332"]);
});

describe.each(fixtures.map((fixture) => [fixture.release, fixture] as const))(
  "Claude Code %s's first request, to a generic OpenAI-compatible upstream",
  (_release, fixture) => {
    let sent: Json;
    let lossy: LossyEntry[];

    beforeAll(async () => {
      const before = upstream.requests.length;
      const reply = await postStream(`${gateway.url}${fixture.path}`, fixture.body, fixture.headers);
      expect(reply.status, reply.text.slice(0, 500)).toBe(200);
      expect(upstream.requests).toHaveLength(before + 1);
      sent = upstream.requests.at(-1)!.body;
      lossy = JSON.parse(String(reply.headers["x-parley-lossy"] ?? "[]")) as LossyEntry[];
    });

    test("no Anthropic-only field, block or role reaches the upstream", () => {
      expect(anthropicLeaks(sent)).toEqual([]);
    });

    test("every top-level field is carried or reported", () => {
      const body = fixture.body as Json;
      for (const key of Object.keys(body)) {
        const carried: Record<string, () => boolean> = {
          model: () => typeof sent.model === "string",
          messages: () => Array.isArray(sent.messages),
          system: () => true, // checked text by text below
          tools: () => Array.isArray(sent.tools),
          max_tokens: () => sent.max_tokens === body.max_tokens,
          stream: () => sent.stream === body.stream,
          temperature: () => sent.temperature === body.temperature,
          metadata: () => sent.user === body.metadata.user_id && Object.keys(body.metadata).length === 1,
          output_config: () =>
            sent.reasoning_effort === body.output_config.effort && Object.keys(body.output_config).length === 1,
        };
        const ok = carried[key]?.() === true || reported(lossy, key, key);
        expect(ok, `top-level '${key}' neither carried nor reported`).toBe(true);
      }
    });

    test("every system and message text reaches the upstream; every other field or block is reported", () => {
      const body = fixture.body as Json;
      const texts = upstreamTexts(sent);
      const system = typeof body.system === "string" ? [{ type: "text", text: body.system }] : (body.system ?? []);
      system.forEach((block: Json, index: number) => {
        expect(texts.includes(block.text), `system[${index}]`).toBe(true);
        for (const key of Object.keys(block).filter((name) => name !== "type" && name !== "text"))
          expect(reported(lossy, key, `system[${index}]`), `system[${index}].${key}`).toBe(true);
      });
      body.messages.forEach((message: Json, index: number) => {
        const path = `messages[${index}]`;
        for (const key of Object.keys(message).filter((name) => name !== "role" && name !== "content"))
          expect(reported(lossy, key, path), `${path}.${key} neither carried nor reported`).toBe(true);
        const blocks =
          typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
        blocks.forEach((block: Json, position: number) => {
          const where = `${path}.content[${position}]`;
          if (block.type !== "text") {
            expect(reported(lossy, block.type, where), `${where}: a ${block.type} block in a first request`).toBe(true);
            return;
          }
          expect(texts.includes(block.text), `${where} text not sent`).toBe(true);
          for (const key of Object.keys(block).filter((name) => name !== "type" && name !== "text"))
            expect(reported(lossy, key, where), `${where}.${key} neither carried nor reported`).toBe(true);
        });
      });
    });

    test("every tool reaches the upstream as a function, its other fields reported", () => {
      const body = fixture.body as Json;
      const names = (sent.tools ?? []).map((tool: Json) => tool.function.name);
      body.tools.forEach((tool: Json, index: number) => {
        const path = `tools[${index}]`;
        if (!names.includes(tool.name)) {
          expect(reported(lossy, String(tool.type), path), `${path} '${tool.name}' left out unreported`).toBe(true);
          return;
        }
        const sentTool = sent.tools.find((candidate: Json) => candidate.function.name === tool.name);
        expect(sentTool.function.parameters).toEqual(tool.input_schema);
        expect(sentTool.function.description).toEqual(tool.description);
        for (const key of Object.keys(tool).filter((name) => !["name", "description", "input_schema"].includes(name)))
          expect(reported(lossy, key, path), `${path}.${key} neither carried nor reported`).toBe(true);
      });
    });
  },
);

/** Whether `x-parley-lossy` names this field (by code or message) or something at or under this path. */
function reported(lossy: readonly LossyEntry[], key: string, path: string): boolean {
  return lossy.some(
    (entry) =>
      entry.code.includes(key) ||
      entry.message.includes(`'${key}'`) ||
      (entry.path !== undefined &&
        (entry.path === path || entry.path.startsWith(`${path}.`) || entry.path.startsWith(`${path}[`))),
  );
}

/** Every text the upstream was sent in its messages, as one string to search. */
function upstreamTexts(body: Json): string {
  const texts: string[] = [];
  for (const message of body.messages) {
    if (typeof message.content === "string") texts.push(message.content);
    else if (Array.isArray(message.content))
      for (const part of message.content) if (typeof part.text === "string") texts.push(part.text);
  }
  return texts.join("\u0000");
}

const ANTHROPIC_ONLY_KEYS = new Set([
  "system",
  "thinking",
  "output_config",
  "context_management",
  "metadata",
  "cache_control",
  "citations",
  "signature",
  "defer_loading",
  "eager_input_streaming",
  "input_examples",
  "allowed_callers",
  "input_schema",
  "tool_use_id",
  "is_error",
  "stop_sequences",
  "top_k",
  "container",
  "mcp_servers",
  "betas",
]);
const OPENAI_ROLES = new Set(["system", "developer", "user", "assistant", "tool"]);
const OPENAI_PART_TYPES = new Set(["text", "image_url", "input_audio", "file"]);

/** Paths in an OpenAI request where an Anthropic-only field, block type or role sits (tool schemas are the tool's own). */
function anthropicLeaks(value: unknown, path = ""): string[] {
  if (Array.isArray(value)) return value.flatMap((item, index) => anthropicLeaks(item, `${path}[${index}]`));
  if (value === null || typeof value !== "object") return [];
  const leaks: string[] = [];
  const object = value as Record<string, unknown>;
  if (/^messages\[\d+\]$/.test(path) && !OPENAI_ROLES.has(String(object.role))) leaks.push(`${path}.role`);
  if (/^messages\[\d+\]\.content\[\d+\]$/.test(path) && !OPENAI_PART_TYPES.has(String(object.type)))
    leaks.push(`${path}.type ${String(object.type)}`);
  for (const [key, item] of Object.entries(object)) {
    const where = path === "" ? key : `${path}.${key}`;
    // "system" is a role in OpenAI: only a top-level field of that name is Anthropic's.
    if (ANTHROPIC_ONLY_KEYS.has(key) && (key !== "system" || path === "")) leaks.push(where);
    if (/^tools\[\d+\]\.function\.parameters$/.test(where)) continue;
    leaks.push(...anthropicLeaks(item, where));
  }
  return leaks;
}
