import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type ProxiedExchange, type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { ensureGeminiCli, GEMINI_CLI_VERSION, type GeminiCliRun, runGeminiCli } from "../support/gemini-cli.js";
import { actAsGemini, type GeminiServer } from "../support/gemini-server.js";
import { type ScriptedTurn, toolResultCount, turnFrames, turnMarks } from "../support/scripted-turns.js";
import { type ScriptedUpstream, startScriptedUpstream, type UpstreamKind } from "../support/scripted-upstream.js";

/**
 * Gemini CLI itself (installed on demand into a cache folder) run headless and offline against the gateway's
 * `/v1beta/models/{model}:streamGenerateContent`, on a scripted upstream of each API: the model thinks, reads a file
 * with Gemini CLI's own `read_file`, runs a command with its `run_shell_command`, then answers. Gemini CLI drops
 * every thought part from the history it sends back, so each upstream's reasoning must reach it again through what
 * the CLI keeps (invariant 16): DeepSeek's `reasoning_content`, Anthropic's signed thinking, a Responses item's
 * `encrypted_content`, Gemini's own signatures on exactly their parts (the scripted Gemini refuses a missing one).
 */

// biome-ignore lint/suspicious/noExplicitAny: assertions walk parsed JSON of any shape
type Json = any;

const WORD = "parsnip";
const FILES = { "notes.txt": `The word of the day is ${WORD}.\n` };
const COMMAND = "echo parley-gemini-two";
const FINAL = `The word is ${WORD}, and the command printed parley-gemini-two.`;
const PROMPT = "Read notes.txt, then run `echo parley-gemini-two`, and tell me the word and what the command printed.";
const TURNS: ScriptedTurn[] = [
  { thought: "I should read the notes first.", call: { name: "read_file", args: { file_path: "notes.txt" } } },
  {
    thought: "The notes name the word; now the command.",
    call: { name: "run_shell_command", args: { command: COMMAND, description: "Print the marker" } },
  },
  { thought: "Both done; I can answer.", text: FINAL },
];

interface CliWorld {
  upstream: ScriptedUpstream;
  gateway: RunningGateway;
  proxy: RecordingProxy;
  run: GeminiCliRun;
}

async function startCliWorld(kind: UpstreamKind): Promise<CliWorld> {
  const entry = await ensureGeminiCli();
  const upstream = await startScriptedUpstream(kind);
  // The turn is told by how many tool results the request carries.
  const reply = (request: Parameters<NonNullable<ScriptedUpstream["fallback"]>>[0]) => {
    const index = Math.min(toolResultCount(request), TURNS.length - 1);
    return { kind: "sse" as const, frames: turnFrames(kind, TURNS[index]!, index) };
  };
  if (kind === "gemini") {
    const server: GeminiServer = { replies: [] };
    actAsGemini(upstream, server);
    const refuseOrReply = upstream.fallback!;
    upstream.fallback = (request) => {
      server.replies = [reply(request)];
      return refuseOrReply(request);
    };
  } else {
    upstream.fallback = reply;
  }
  const gateway = await startTestGateway({
    providers: { scripted: { upstream, type: kind, ...(kind === "openai" ? { preset: "deepseek" } : {}) } },
    routes: [
      { match: "*", provider: "scripted", model: kind === "gemini" ? "gemini-3-pro-preview" : "scripted-model" },
    ],
  });
  const proxy = await startRecordingProxy(gateway.url);
  const run = await runGeminiCli({
    entry,
    baseUrl: proxy.url,
    model: "gemini-e2e-model",
    prompt: PROMPT,
    files: FILES,
  });
  return { upstream, gateway, proxy, run };
}

async function closeCliWorld(world: CliWorld | undefined): Promise<void> {
  await world?.proxy.close();
  await world?.gateway.close();
  await world?.upstream.close();
}

function describeRun(run: GeminiCliRun): string {
  return `exit ${run.code}; stderr:\n${run.stderr.slice(-2_000)}\nstdout tail:\n${run.stdout.slice(-3_000)}`;
}

/** What Gemini CLI printed: both its tools ran and succeeded, and it gave the answer. */
function expectCompletedLoop(run: GeminiCliRun): void {
  expect(run.code, describeRun(run)).toBe(0);
  expect(run.answer, describeRun(run)).toContain(FINAL);
  const uses = run.events.filter((event) => event.type === "tool_use");
  expect(uses.map((event) => event.tool_name)).toEqual(["read_file", "run_shell_command"]);
  const results = run.events.filter((event) => event.type === "tool_result");
  expect(results.map((event) => event.status)).toEqual(["success", "success"]);
  expect(run.result?.status).toBe("success");
}

/** What Gemini CLI sent: three generate requests, each history without a thought part, the tool results whole. */
function expectCliHistories(exchanges: ProxiedExchange[]): Json[] {
  const posts = exchanges.filter((exchange) => exchange.path.includes(":streamGenerateContent"));
  expect(posts.map((exchange) => exchange.status)).toEqual([200, 200, 200]);
  const contents = (posts[2]!.body as Json).contents as Json[];
  const parts = contents.flatMap((content) => content.parts as Json[]);
  expect(parts.some((part) => part.thought === true)).toBe(false);
  const responses = parts.filter((part) => part.functionResponse !== undefined);
  expect(responses.map((part) => part.functionResponse.name)).toEqual(["read_file", "run_shell_command"]);
  expect(JSON.stringify(responses[0])).toContain(WORD);
  expect(JSON.stringify(responses[1])).toContain("parley-gemini-two");
  return contents;
}

/** The upstream's requests: three, each the one before it followed by the answer it gave and the tool's result. */
function upstreamBodies(upstream: ScriptedUpstream): Json[] {
  const bodies = upstream.requests.map((request) => request.body as Json);
  expect(bodies).toHaveLength(3);
  return bodies;
}

const kinds: Array<{ kind: UpstreamKind; label: string }> = [
  { kind: "openai", label: "a DeepSeek-style Chat upstream" },
  { kind: "anthropic", label: "an Anthropic upstream" },
  { kind: "openai-responses", label: "a Responses upstream" },
  { kind: "gemini", label: "a Gemini upstream" },
];

for (const { kind, label } of kinds) {
  describe(`Gemini CLI ${GEMINI_CLI_VERSION}, headless, through the gateway to ${label}`, () => {
    let world: CliWorld | undefined;
    beforeAll(async () => {
      world = await startCliWorld(kind);
    }, 20 * 60_000);
    afterAll(() => closeCliWorld(world));

    test("reads the file and runs the command the upstream asked for, and completes the turn", () => {
      expectCompletedLoop(world!.run);
      expectCliHistories(world!.proxy.exchanges);
    });

    test("every earlier turn's reasoning reaches the upstream that made it again, as it made it", () => {
      const bodies = upstreamBodies(world!.upstream);
      const last = bodies[2];
      switch (kind) {
        case "openai": {
          const assistants = (last.messages as Json[]).filter((message) => message.role === "assistant");
          expect(assistants.map((message) => message.reasoning_content)).toEqual(
            TURNS.slice(0, 2).map((t) => t.thought),
          );
          expect(assistants.map((message) => message.tool_calls[0].function.name)).toEqual([
            "read_file",
            "run_shell_command",
          ]);
          expect(JSON.stringify(last)).not.toContain("parley.v1.");
          break;
        }
        case "anthropic": {
          const assistants = (last.messages as Json[]).filter((message) => message.role === "assistant");
          expect(assistants.map((message) => message.content[0])).toEqual(
            [0, 1].map((index) => ({
              type: "thinking",
              thinking: TURNS[index]!.thought,
              signature: turnMarks.anthropicSignature(index),
            })),
          );
          break;
        }
        case "openai-responses": {
          const reasoning = (last.input as Json[]).filter((item) => item.type === "reasoning");
          expect(reasoning.map((item) => item.encrypted_content)).toEqual([0, 1].map(turnMarks.encryptedContent));
          break;
        }
        case "gemini": {
          const models = (last.contents as Json[]).filter((content) => content.role === "model");
          const calls = models.flatMap((content) => content.parts as Json[]).filter((part) => part.functionCall);
          expect(calls.map((part) => part.thoughtSignature)).toEqual([0, 1].map(turnMarks.geminiSignature));
          expect(JSON.stringify(last)).not.toContain("parley.v1.");
          break;
        }
      }
      // What came before is all there, unchanged.
      for (let turn = 1; turn < 3; turn++) {
        const list = (body: Json) => body.messages ?? body.input ?? body.contents;
        expect(list(bodies[turn]).slice(0, list(bodies[turn - 1]).length)).toEqual(list(bodies[turn - 1]));
      }
    });
  });
}
