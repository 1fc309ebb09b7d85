import Anthropic from "@anthropic-ai/sdk";
import { betaTool } from "@anthropic-ai/sdk/helpers/beta/json-schema";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { RunningGateway } from "../../src/gateway/server.js";
import { type RecordingProxy, startRecordingProxy } from "../support/claude-code.js";
import { startTestGateway } from "../support/gateway-harness.js";
import { VLLM } from "../support/server-shapes.js";
import { type ShapedUpstream, startShapedUpstream } from "../support/shaped-upstream.js";
import type { ChatMessage } from "./e2e-support.js";

/**
 * The Anthropic SDK's tool runner (`client.beta.messages.toolRunner()`, @anthropic-ai/sdk 1.12) through the
 * gateway in front of an OpenAI-compatible server. The runner threads by default: its first request carries
 * `thread: {type: "create"}` and the whole history, the next only the tool result and
 * `thread: {type: "continue", previous_message_id}` (lib/internal/threads/ThreadState.ts, buildCreateArguments).
 * The gateway keeps no threads, so it answers a continue as Anthropic answers for a thread it does not have: 404
 * with `error.details.error_code: "thread_not_found"`, on which the SDK replays the whole history under a new thread
 * (ThreadState.recoversFrom), and stops threading when the replacement is not found either (the runner's
 * `unsupportedRequestBehavior` is `continue_unthreaded`). The loop must finish with the model having seen the
 * whole conversation on every turn.
 */

let upstream: ShapedUpstream;
let gateway: RunningGateway;
let proxy: RecordingProxy;

beforeAll(async () => {
  upstream = await startShapedUpstream(VLLM);
  gateway = await startTestGateway({ providers: { local: { type: "openai", upstream, preset: "vllm" } } });
  await gateway.discovery;
  proxy = await startRecordingProxy(gateway.url);
});

afterAll(async () => {
  await proxy.close();
  await gateway.close();
  await upstream.close();
});

const bash = betaTool({
  name: "Bash",
  description: "Runs a shell command and returns what it printed.",
  inputSchema: { type: "object", properties: { command: { type: "string" } }, required: ["command"] },
  run: ({ command }) => (command === "echo parley-recipe" ? "parley-recipe" : "unexpected command"),
});

async function runLoop(stream: boolean) {
  const client = new Anthropic({ baseURL: proxy.url, apiKey: "sk-local", maxRetries: 0 });
  const before = { upstream: upstream.requests.length, client: proxy.exchanges.length };
  const runner = client.beta.messages.toolRunner({
    model: "claude-opus-5-5",
    max_tokens: 1_024,
    stream,
    messages: [{ role: "user", content: "Run `echo parley-recipe` and tell me what it printed." }],
    tools: [bash],
  });
  const final = await runner.runUntilDone();
  return {
    final,
    upstream: upstream.requests.slice(before.upstream),
    client: proxy.exchanges.slice(before.client),
  };
}

describe("beta.messages.toolRunner() through the gateway", () => {
  for (const stream of [false, true]) {
    test(`finishes its loop with the whole context on every upstream turn (stream: ${stream})`, async () => {
      const { final, upstream: sent, client } = await runLoop(stream);
      expect(final.content.at(-1)).toMatchObject({ type: "text", text: "The command printed parley-recipe." });
      expect(final.stop_reason).toBe("end_turn");

      // A thread continue was answered as Anthropic answers an unknown thread, and the SDK sent the history again.
      const continues = client.filter(
        (exchange) => (exchange.body as { thread?: { type?: string } }).thread?.type === "continue",
      );
      expect(continues.length).toBeGreaterThan(0);
      for (const exchange of continues) expect(exchange.status).toBe(404);

      // Every request that reached the upstream carried the whole conversation: no tool result without its call.
      for (const request of sent) {
        const messages = (request.body as { messages: ChatMessage[] }).messages;
        expect(messages[0]).toMatchObject({ role: "user" });
        const results = messages.filter((message) => message.role === "tool");
        for (const result of results) {
          const call = messages.find(
            (message) =>
              message.role === "assistant" &&
              (message.tool_calls as Array<{ id: string }> | undefined)?.some(
                (tool) => tool.id === result.tool_call_id,
              ),
          );
          expect(call, JSON.stringify(messages)).toBeDefined();
        }
      }
      const last = (sent.at(-1)!.body as { messages: ChatMessage[] }).messages;
      expect(last.map((message) => message.role)).toEqual(["user", "assistant", "tool"]);
      expect(last[2]).toMatchObject({ content: "parley-recipe" });
    });
  }
});
