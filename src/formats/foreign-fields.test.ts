import { describe, expect, test } from "vitest";
import type { ConversationRequest, LossyEntry } from "../core/index.js";
import type { UpstreamConnection } from "./adapter.js";
import { formatAdapter } from "./registry.js";

/**
 * A field reaches another API's upstream only where that API has the same field, or the provider's preset takes
 * it; everything else is dropped and reported. Strict servers (api.openai.com, vLLM, Anthropic) answer 400 to a
 * field they do not know, so an unknown field must never reach them unreported.
 */

const anthropic = formatAdapter("anthropic");
const openai = formatAdapter("openai");

function connect(type: "anthropic" | "openai", preset?: string): UpstreamConnection {
  const adapter = type === "anthropic" ? anthropic : openai;
  return adapter.upstream.connect({
    name: "p",
    baseUrl: type === "anthropic" ? "http://127.0.0.1:1" : "http://127.0.0.1:1/v1",
    compat: {},
    headers: {},
    ...(preset === undefined ? {} : { preset }),
  });
}

function read(format: "anthropic" | "openai", body: unknown): ConversationRequest {
  const adapter = format === "anthropic" ? anthropic : openai;
  const read = adapter.client.readRequest(body);
  expect(read.lossy).toEqual([]);
  return read.value;
}

function send(connection: UpstreamConnection, request: ConversationRequest) {
  const { value, lossy } = connection.encodeRequest(request);
  return { body: value as Record<string, unknown> & { messages: Array<Record<string, unknown>> }, lossy };
}

const codes = (lossy: LossyEntry[]) => lossy.map((entry) => [entry.code, entry.path]);

describe("an OpenAI client's fields to an Anthropic upstream", () => {
  const request = read("openai", {
    model: "m",
    messages: [
      { role: "user", content: "Write the opening line." },
      { role: "assistant", content: "Once upon", prefix: true },
    ],
    tools: [{ type: "function", function: { name: "f", parameters: { type: "object" }, strict: true } }],
    metadata: { team: "search" },
    extra_body: { top_k: 5 },
    top_k: 40,
    service_tier: "auto",
    stream_options: { include_usage: true },
    stream: true,
  });
  const { body, lossy } = send(connect("anthropic"), request);

  test("metadata, a message's prefix and extra_body do not reach it, and are reported where they were", () => {
    expect(body.metadata).toBeUndefined();
    expect(body.extra_body).toBeUndefined();
    expect(body.messages[1]).toEqual({ role: "assistant", content: "Once upon" });
    expect(lossy).toEqual([
      { code: "openai-fields-dropped", message: "no Anthropic equivalent for prefix", path: "messages[1]" },
      { code: "openai-fields-dropped", message: "no Anthropic equivalent for metadata, extra_body" },
    ]);
  });

  test("fields Anthropic has under the same name and meaning go as they came", () => {
    expect(body).toMatchObject({ top_k: 40, service_tier: "auto", stream: true });
    expect(body.tools).toEqual([{ name: "f", input_schema: { type: "object" }, strict: true }]);
  });

  test("OpenAI service tiers Anthropic does not have are dropped and reported", () => {
    const flex = send(
      connect("anthropic"),
      read("openai", { model: "m", messages: [{ role: "user", content: "q" }], service_tier: "flex" }),
    );
    expect(flex.body.service_tier).toBeUndefined();
    expect(flex.lossy).toEqual([
      { code: "openai-fields-dropped", message: "no Anthropic equivalent for service_tier" },
    ]);
  });
});

describe("fields Parley does not know, to an OpenAI-compatible upstream", () => {
  // Claude Code's per-turn output_config on its in-messages system message; the SDK's toolRunner thread.
  const fromAnthropic = read("anthropic", {
    model: "m",
    max_tokens: 100,
    thread: { type: "create" },
    messages: [
      { role: "user", content: "hi" },
      { role: "system", content: "env", output_config: { effort: "low" } },
    ],
  });

  test("another API's fields are dropped for a strict server and reported, top-level and in a message", () => {
    const { body, lossy } = send(connect("openai"), fromAnthropic);
    expect(body.thread).toBeUndefined();
    expect(body.messages[1]).toEqual({ role: "system", content: "env" });
    expect(codes(lossy)).toEqual([
      ["field-dropped-output_config", "messages[1].output_config"],
      ["field-dropped-thread", "thread"],
    ]);
  });

  test("they go where the provider's preset names them, and not merely because it ignores what it does not know", () => {
    const named = openai.upstream.connect({
      name: "p",
      baseUrl: "http://127.0.0.1:1/v1",
      compat: { extraFields: ["thread", "output_config"] },
      headers: {},
    });
    const { body, lossy } = send(named, fromAnthropic);
    expect(body.thread).toEqual({ type: "create" });
    expect(body.messages[1]).toEqual({ role: "system", content: "env", output_config: { effort: "low" } });
    expect(lossy).toEqual([]);
    // llama.cpp would ignore them: sent there, they would be lost unreported
    const lenient = send(connect("openai", "llamacpp"), fromAnthropic);
    expect(lenient.body.thread).toBeUndefined();
    expect(codes(lenient.lossy)).toEqual([
      ["field-dropped-output_config", "messages[1].output_config"],
      ["field-dropped-thread", "thread"],
    ]);
  });

  const fromOpenAI = read("openai", {
    model: "m",
    messages: [
      { role: "user", content: "Complete it." },
      { role: "assistant", content: "def f(", prefix: true },
    ],
    chat_template_kwargs: { enable_thinking: false },
    min_p: 0.05,
    metadata: { run: "7" },
  });

  test("a client's extension goes only to a provider whose preset takes it; Chat Completions fields go to all", () => {
    const strict = send(connect("openai", "openai"), fromOpenAI);
    expect(strict.body).toMatchObject({ metadata: { run: "7" } });
    expect(strict.body.chat_template_kwargs).toBeUndefined();
    expect(strict.body.min_p).toBeUndefined();
    expect(strict.body.messages[1]).toEqual({ role: "assistant", content: "def f(" });
    expect(codes(strict.lossy)).toEqual([
      ["field-dropped-prefix", "messages[1].prefix"],
      ["field-dropped-chat_template_kwargs", "chat_template_kwargs"],
      ["field-dropped-min_p", "min_p"],
    ]);

    const vllm = send(connect("openai", "vllm"), fromOpenAI);
    expect(vllm.body).toMatchObject({ chat_template_kwargs: { enable_thinking: false }, min_p: 0.05 });
    expect(codes(vllm.lossy)).toEqual([["field-dropped-prefix", "messages[1].prefix"]]);

    const deepseek = send(connect("openai", "deepseek"), fromOpenAI);
    expect(deepseek.body.messages[1]).toEqual({ role: "assistant", content: "def f(", prefix: true });
  });

  test("a setting lets a provider take more: compat.extraFields", () => {
    const connection = openai.upstream.connect({
      name: "p",
      baseUrl: "http://127.0.0.1:1/v1",
      compat: { extraFields: ["min_p"] },
      headers: {},
    });
    expect(send(connection, fromOpenAI).body.min_p).toBe(0.05);
  });

  test("Anthropic's top_k goes only where the preset takes it", () => {
    const request = read("anthropic", {
      model: "m",
      max_tokens: 10,
      top_k: 5,
      messages: [{ role: "user", content: "q" }],
    });
    expect(send(connect("openai"), request).body.top_k).toBeUndefined();
    expect(send(connect("openai", "vllm"), request).body.top_k).toBe(5);
  });
});
