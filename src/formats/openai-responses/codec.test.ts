import { describe, expect, test } from "vitest";
import { fixtureJson } from "../../../test/support/responses-stream.js";
import { decodeOriginSignature, type Message } from "../../core/index.js";
import { repair } from "../../repair/index.js";
import { formatAdapter } from "../registry.js";
import type { Json, ResponsesItem } from "./wire-types.js";

/** Conversions to and from the canonical model, read as input -> output. */

const responses = formatAdapter("responses");
const chat = formatAdapter("openai");
const anthropic = formatAdapter("anthropic");

const codexTurn = (n: 1 | 2) =>
  fixtureJson<Json & { input: ResponsesItem[] }>(`codex/codex-0.169.0-turn-${n}.request.json`);

/** The items a Responses client is given for an answer, as it sends them back next turn. */
function answeredItems(answer: ReturnType<typeof responses.upstream.decodeResponse>["value"]): ResponsesItem[] {
  return (responses.client.encodeResponse(answer).value as { output: ResponsesItem[] }).output;
}

/** A provider's request for a history, the history repaired for that provider first (as the gateway does). */
function providerRequest(history: Message[], provider: { type: string; name: string }) {
  const adapter = [responses, chat, anthropic].find((format) => format.upstream.type === provider.type)!;
  const connection = adapter.upstream.connect({
    name: provider.name,
    baseUrl: "http://127.0.0.1:9/v1",
    compat: {},
    headers: {},
  });
  const repaired = repair(history, connection.repairTarget);
  return connection.encodeRequest({ model: "m", messages: repaired.messages });
}

describe("Codex's requests", () => {
  test("read into the core and back: the input items exactly as they came", () => {
    for (const turn of [1, 2] as const) {
      const input = codexTurn(turn).input;
      const core = responses.history.toCore(input);
      expect(core.lossy).toEqual([]);
      expect(responses.history.fromCore(core.messages)).toEqual({ value: input, lossy: [] });
    }
  });

  test("as a core request: developer messages are system messages, the namespace's functions are tools", () => {
    const read = responses.client.readRequest(codexTurn(2));
    expect(read.state).toEqual({ kept: false });
    expect(read.value.messages.map((message) => message.role)).toEqual([
      "system",
      "system",
      "user",
      "user",
      "assistant",
      "user",
    ]);
    expect(read.value.messages[4]!.parts.map((part) => part.type)).toEqual(["thinking", "tool_call"]);
    expect(read.value.tools?.map((tool) => tool.name)).toContain("multi_agent_v1__spawn_agent");
    expect(read.value.thinking?.type).toBe("enabled");
  });

  test("to a Chat upstream: the tool loop whole, and what it cannot take reported, not refused", () => {
    const read = responses.client.readRequest(codexTurn(2));
    const out = chat.upstream.encodeRequest(read.value, { reasoning: "reasoning_content" });
    const body = out.value as { messages: Json[]; tools: Json[] };
    expect(body.messages.map((message) => message.role)).toEqual([
      "system",
      "system",
      "user",
      "user",
      "assistant",
      "tool",
    ]);
    expect(body.messages[4]).toEqual({
      role: "assistant",
      reasoning_content: "I should run echo.",
      tool_calls: [
        {
          id: "call_1",
          type: "function",
          function: { name: "exec_command", arguments: '{"cmd":"echo parley-codex"}' },
        },
      ],
    });
    expect(body.messages[5]).toMatchObject({ role: "tool", tool_call_id: "call_1" });
    expect(JSON.stringify(body)).not.toContain('"responses"');
    expect(body.tools.map((tool) => (tool.function as Json).name)).toContain("multi_agent_v1__wait_agent");
    // Codex's settings Chat Completions has not are reported, each once; how its items were written (types, ids,
    // statuses) is no field of any API and goes quietly.
    const codes = out.lossy.map((entry) => entry.code);
    expect(codes).toContain("field-dropped-tools");
    // its cache key is a Chat Completions field too: it goes as it came
    expect(codes).not.toContain("field-dropped-prompt_cache_key");
    expect((body as Json).prompt_cache_key).toBe("01a209e5-6f3f-7961-8815-6b1db27ffbf3");
    expect(out.lossy.find((entry) => entry.code === "field-dropped-tools")?.message).toBe(
      "responses field 'tools' has no OpenAI equivalent and was dropped",
    );
    for (const form of ["type", "id", "status", "item", "namespace"])
      expect(codes).not.toContain(`field-dropped-${form}`);
  });

  test("to an Anthropic upstream: the developer prompt is the system prompt, no Responses field leaks", () => {
    const read = responses.client.readRequest(codexTurn(2));
    const out = anthropic.upstream.encodeRequest(read.value);
    const text = JSON.stringify(out.value);
    expect(text).not.toContain('"responses"');
    expect(text).not.toContain('"developer"');
    const dropped = out.lossy.filter((entry) => entry.code === "responses-fields-dropped");
    expect(dropped).toEqual([
      {
        code: "responses-fields-dropped",
        message: "no Anthropic equivalent for prompt_cache_key, client_metadata, tools",
      },
    ]);
  });
});

describe("reasoning is origin-bound", () => {
  const whole = fixtureJson("openai-responses/gpt-5-mini-reasoning-encrypted.json");
  const original = (whole.output as ResponsesItem[])[0]!;

  /** The recorded answer, given to a Responses client, and the history that client sends next turn. */
  function nextTurn(): Message[] {
    const answer = responses.upstream.connect({ name: "openai", baseUrl: "x", compat: {}, headers: {} });
    const decoded = answer.decodeResponse(whole, { model: "m", messages: [] }).value;
    const items = answeredItems(decoded);
    // What the client saw: the summary, and Parley's envelope, not the provider's sealed content.
    expect(items[0]).toMatchObject({ type: "reasoning", id: original.id, summary: original.summary });
    expect(items[0]!.encrypted_content).not.toBe(original.encrypted_content);
    expect(decodeOriginSignature(items[0]!.encrypted_content as string)).toMatchObject({
      format: "responses",
      provider: "openai",
      sealed: original.encrypted_content,
    });
    return responses.history.toCore([{ role: "user", content: "sum it" }, ...items]).messages;
  }

  test("a provider's reasoning item goes back to that provider, its id and encrypted content unmodified", () => {
    const body = providerRequest(nextTurn(), { type: "openai-responses", name: "openai" }).value as {
      input: ResponsesItem[];
    };
    expect(body.input[1]).toEqual({
      id: original.id,
      type: "reasoning",
      summary: original.summary,
      encrypted_content: original.encrypted_content,
    });
  });

  test("to another Responses provider it is text, and says so", () => {
    const out = providerRequest(nextTurn(), { type: "openai-responses", name: "elsewhere" });
    const text = JSON.stringify(out.value);
    expect(text).not.toContain(original.encrypted_content as string);
    expect(text).not.toContain(original.id as string);
    expect(out.lossy).toContainEqual(expect.objectContaining({ code: "thinking-to-text" }));
  });

  test("to a Chat or Anthropic provider it never goes sealed", () => {
    for (const type of ["openai", "anthropic"]) {
      const out = providerRequest(nextTurn(), { type, name: "other" });
      const text = JSON.stringify(out.value);
      expect(text).not.toContain(original.encrypted_content as string);
      expect(text).not.toContain("parley.v1.");
    }
  });

  test("an Anthropic signed thinking block crosses a Responses client and goes back exactly", () => {
    for (const file of ["claude-sonnet-4.5-thinking-signature.json", "claude-sonnet-4.5-redacted-thinking.json"]) {
      const recorded = fixtureJson(`anthropic/${file}`);
      const answer = anthropic.upstream.decodeResponse(recorded).value;
      const items = answeredItems(answer);
      const history = responses.history.toCore([{ role: "user", content: "go on" }, ...items]).messages;
      const body = providerRequest(history, { type: "anthropic", name: "claude" }).value as { messages: Json[] };
      const blocks = body.messages[1]!.content as Json[];
      expect(blocks[0]).toEqual((recorded.content as Json[])[0]);
      // Never to a Responses provider: neither the signature nor the redacted data.
      const elsewhere = JSON.stringify(providerRequest(history, { type: "openai-responses", name: "x" }).value);
      const sealed = ((recorded.content as Json[])[0]!.signature ?? (recorded.content as Json[])[0]!.data) as string;
      expect(elsewhere).not.toContain(sealed);
    }
  });

  test("a Chat provider's reasoning goes back to it in the field it came in", () => {
    const connection = chat.upstream.connect({ name: "deepseek", baseUrl: "http://x/v1", compat: {}, headers: {} });
    const answer = connection.decodeResponse(fixtureJson("deepseek/deepseek-reasoner-tool-call.json"), {
      model: "m",
      messages: [],
    }).value;
    const items = answeredItems(answer);
    const history = responses.history.toCore([{ role: "user", content: "hi" }, ...items]).messages;
    const body = providerRequest(history, { type: "openai", name: "deepseek" }).value as { messages: Json[] };
    const thinking = answer.message.parts.find((part) => part.type === "thinking");
    expect(body.messages[1]).toMatchObject({
      role: "assistant",
      reasoning_content: (thinking as { thinking: string }).thinking,
    });
  });
});

describe("tools", () => {
  const customTool = {
    type: "custom",
    name: "write_sql",
    description: "Write a SQL SELECT query to answer the user question.",
    format: { type: "grammar", syntax: "regex", definition: "SELECT .+" },
  };

  test("a custom tool is a function of one string elsewhere, and its call comes back as a custom call", () => {
    const read = responses.client.readRequest({ model: "m", input: "q", tools: [customTool], tool_choice: "required" });
    const chatBody = chat.upstream.encodeRequest(read.value).value as { tools: Json[] };
    expect(chatBody.tools[0]).toMatchObject({
      type: "function",
      function: { name: "write_sql", parameters: { required: ["input"] } },
    });
    const fromChat = chat.upstream.decodeResponse({
      id: "c",
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            content: null,
            tool_calls: [
              { id: "call_9", type: "function", function: { name: "write_sql", arguments: '{"input":"SELECT 1"}' } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    }).value;
    const output = (responses.client.encodeResponse(fromChat, { request: read.value }).value as { output: Json[] })
      .output;
    expect(output[0]).toMatchObject({
      type: "custom_tool_call",
      call_id: "call_9",
      name: "write_sql",
      input: "SELECT 1",
    });
  });

  test("a recorded custom tool call reads into the core and goes out as it came", () => {
    const recorded = fixtureJson("openai-responses/gpt-5.2-codex-custom-tool.json");
    const answer = responses.upstream.decodeResponse(recorded).value;
    expect(answer.message.parts[0]).toMatchObject({
      type: "tool_call",
      input: { input: "SELECT * FROM users WHERE age > 25" },
    });
    const read = responses.client.readRequest({ model: "m", input: "q", tools: recorded.tools as Json[] });
    const out = responses.client.encodeResponse(answer, { request: read.value }).value as { output: Json[] };
    expect(out.output).toEqual([{ ...(recorded.output as Json[])[0], status: "completed" }]);
  });

  test("a namespace's functions go out in their namespace, and their calls come back named within it", () => {
    const tools = codexTurn(1).tools as Json[];
    const read = responses.client.readRequest({ model: "m", input: "q", tools });
    const body = responses.upstream.encodeRequest(read.value).value as { tools: Json[] };
    expect(body.tools).toEqual(tools);
    const call = {
      id: "c",
      model: "m",
      choices: [
        {
          index: 0,
          message: {
            role: "assistant",
            tool_calls: [
              { id: "call_a", type: "function", function: { name: "multi_agent_v1__wait_agent", arguments: "{}" } },
            ],
          },
          finish_reason: "tool_calls",
        },
      ],
    };
    const out = responses.client.encodeResponse(chat.upstream.decodeResponse(call).value, { request: read.value })
      .value as { output: Json[] };
    expect(out.output[0]).toMatchObject({ type: "function_call", name: "wait_agent", namespace: "multi_agent_v1" });
  });
});

describe("requests", () => {
  test("a Responses request goes to a Responses provider with what means the same, Parley's state left out", () => {
    const body = {
      model: "gpt-5",
      instructions: "Be brief.",
      input: [
        {
          role: "user",
          content: [
            { type: "input_text", text: "Hi" },
            { type: "input_image", image_url: "https://x/y.png", detail: "low" },
          ],
        },
      ],
      max_output_tokens: 500,
      temperature: 0.5,
      parallel_tool_calls: false,
      tools: [{ type: "function", name: "f", parameters: { type: "object" }, strict: true }],
      tool_choice: { type: "function", name: "f" },
      reasoning: { effort: "low", summary: "concise" },
      text: {
        format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true },
        verbosity: "low",
      },
      metadata: { run: "1" },
      prompt_cache_key: "k",
      store: true,
      previous_response_id: "resp_1",
      include: ["reasoning.encrypted_content", "message.output_text.logprobs"],
      stream: true,
    };
    const read = responses.client.readRequest(body);
    expect(read.state).toEqual({ kept: true, previous: "resp_1" });
    const out = responses.upstream.encodeRequest(read.value);
    expect(out.lossy).toEqual([]);
    expect(out.value).toEqual({
      model: "gpt-5",
      instructions: "Be brief.",
      input: body.input,
      tools: body.tools,
      tool_choice: body.tool_choice,
      parallel_tool_calls: false,
      max_output_tokens: 500,
      temperature: 0.5,
      reasoning: { effort: "low", summary: "concise" },
      text: body.text,
      stream: true,
      store: false,
      include: ["reasoning.encrypted_content", "message.output_text.logprobs"],
      metadata: { run: "1" },
      prompt_cache_key: "k",
    });
  });

  test("Anthropic cache breakpoints have no Responses field: dropped and reported once, where the first sat", () => {
    const ephemeral = { type: "ephemeral" };
    const read = anthropic.client.readRequest({
      model: "m",
      max_tokens: 100,
      system: [
        { type: "text", text: "You are a coding agent." },
        { type: "text", text: "Project notes.", cache_control: ephemeral },
      ],
      messages: [{ role: "user", content: [{ type: "text", text: "Fix the bug.", cache_control: ephemeral }] }],
    });
    const out = responses.upstream.encodeRequest(read.value);
    expect(out.lossy).toEqual([
      expect.objectContaining({ code: "cache_control-stripped", path: "messages[0].content[1]" }),
    ]);
    expect(JSON.stringify(out.value)).not.toContain("cache_control");
    expect((out.value as { input: Json[] }).input).toEqual([
      {
        role: "system",
        content: [
          { type: "input_text", text: "You are a coding agent." },
          { type: "input_text", text: "Project notes." },
        ],
      },
      { role: "user", content: [{ type: "input_text", text: "Fix the bug." }] },
    ]);
  });

  test("other APIs' message and part fields: carried where Responses has the same, else dropped and reported", () => {
    const fromChat = chat.client.readRequest({
      model: "m",
      messages: [
        {
          role: "user",
          name: "alice",
          content: [
            { type: "text", text: "What is in it?" },
            { type: "image_url", image_url: { url: "https://example.com/a.png", detail: "low" } },
          ],
        },
      ],
    });
    const toResponses = responses.upstream.encodeRequest(fromChat.value);
    expect((toResponses.value as { input: Json[] }).input).toEqual([
      {
        role: "user",
        content: [
          { type: "input_text", text: "What is in it?" },
          { type: "input_image", image_url: "https://example.com/a.png", detail: "low" },
        ],
      },
    ]);
    expect(toResponses.lossy.map((entry) => [entry.code, entry.path])).toEqual([
      ["field-dropped-name", "messages[0].name"],
    ]);
    const citation = {
      type: "char_location",
      cited_text: "x",
      document_index: 0,
      start_char_index: 0,
      end_char_index: 1,
    };
    const fromAnthropic = anthropic.client.readRequest({
      model: "m",
      max_tokens: 100,
      messages: [
        {
          role: "user",
          content: [
            {
              type: "document",
              source: { type: "text", media_type: "text/plain", data: "hi" },
              title: "a.txt",
              context: "c",
            },
            { type: "text", text: "Quote it.", citations: [citation] },
          ],
        },
      ],
    });
    const out = responses.upstream.encodeRequest(fromAnthropic.value);
    expect((out.value as { input: Json[] }).input[0]!.content).toEqual([
      { type: "input_file", filename: "a.txt", file_data: "data:text/plain;base64,aGk=" },
      { type: "input_text", text: "Quote it." },
    ]);
    expect(out.lossy.map((entry) => [entry.code, entry.path])).toEqual([
      ["field-dropped-context", "messages[0].content[0].context"],
      ["field-dropped-citations", "messages[0].content[1].citations"],
    ]);
  });

  test("text.format reaches a Chat provider as response_format", () => {
    const read = responses.client.readRequest({
      model: "m",
      input: "x",
      text: { format: { type: "json_schema", name: "out", schema: { type: "object" }, strict: true } },
    });
    const out = chat.upstream.encodeRequest(read.value).value as Json;
    expect(out.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "out", schema: { type: "object" }, strict: true },
    });
  });

  test("bad input is a 400 naming the field; what Parley cannot do is refused by name", () => {
    const read = (body: unknown) => () => responses.client.readRequest(body);
    expect(read({ model: "m", input: [{ type: "function_call", name: "f", arguments: "{}" }] })).toThrow(
      "input[0].call_id: must be a non-empty string",
    );
    expect(read({ model: "m", input: [{ role: "robot", content: "x" }] })).toThrow("input[0].role");
    expect(read({ model: "m", input: [{ role: "user", content: [{ type: "input_text" }] }] })).toThrow(
      "input[0].content[0].text: must be a string",
    );
    expect(read({ model: "m", background: true })).toThrow("background");
    expect(read({ model: "" })).toThrow("model");
  });
});

describe("reasoning asked for", () => {
  test("turns thinking on with a budget for its effort that leaves the answer room within the client's limit", () => {
    const read = (body: Json) => responses.client.readRequest({ model: "m", input: "x", ...body }).value;
    expect(read({ reasoning: { summary: "auto" } }).thinking).toMatchObject({ type: "enabled", budgetTokens: 8192 });
    expect(read({ reasoning: { summary: "auto", effort: "high" } }).thinking?.budgetTokens).toBe(16384);
    const limited = read({ reasoning: { summary: "auto", effort: "high" }, max_output_tokens: 4000 });
    const body = anthropic.upstream.encodeRequest(limited).value as Json;
    expect(body).toMatchObject({ max_tokens: 4000, thinking: { type: "enabled", budget_tokens: 2976 } });
    expect(read({ reasoning: { effort: "none", summary: "auto" } }).thinking).toBeUndefined();
    expect(read({ reasoning: { effort: "low" } }).thinking).toBeUndefined();
  });
});

describe("histories a provider gets", () => {
  test("an assistant message given as a string, then reasoning no provider made: each in an item of its own", () => {
    const history = responses.history.toCore([
      { role: "user", content: "q" },
      { role: "assistant", content: "first" },
      { type: "reasoning", id: "rs_x", summary: [{ type: "summary_text", text: "why" }], encrypted_content: "gAAAA" },
      { role: "assistant", content: [{ type: "output_text", text: "second", annotations: [] }] },
    ]).messages;
    const out = providerRequest(history, { type: "openai-responses", name: "openai" });
    expect((out.value as { input: Json[] }).input).toEqual([
      { role: "user", content: "q" },
      { type: "message", role: "assistant", content: "first" },
      {
        type: "message",
        role: "assistant",
        content: [{ type: "output_text", text: "<think>why</think>", annotations: [] }],
      },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "second", annotations: [] }] },
    ]);
    expect(out.lossy).toContainEqual(expect.objectContaining({ code: "thinking-to-text" }));
  });
});

describe("nulls where OpenAI allows them, and junk where an upstream sends it", () => {
  const responses = formatAdapter("responses");

  test("text.format: null is plain text, as OpenAI reads it, for every target", () => {
    const read = responses.client.readRequest({ model: "m", input: "hi", text: { format: null } });
    expect(read.value.responseFormat).toBeUndefined();
    for (const id of ["openai", "anthropic", "responses"] as const) {
      expect(() => formatAdapter(id).upstream.encodeRequest(read.value)).not.toThrow();
    }
  });

  test("an upstream output item that is not an object is reported, never a crash", () => {
    const decoded = responses.upstream.decodeResponse({
      id: "resp_1",
      object: "response",
      status: "completed",
      model: "m",
      output: [null, { type: "message", role: "assistant", content: [{ type: "output_text", text: "Hi." }] }],
    });
    expect(decoded.lossy.map((entry) => entry.path)).toContain("output[0]");
    expect(decoded.value.message.parts.some((part) => part.type === "text" && part.text === "Hi.")).toBe(true);
  });
});
