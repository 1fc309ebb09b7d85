import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import type { StreamEvent } from "../../core/index.js";
import { accumulate, foldEvents } from "../../stream/accumulate.js";
import { parseSse } from "../../stream/sse.js";
import { createOpenAIStreamDecoder, type OpenAIDecodeOptions } from "./stream-decoder.js";
import { openaiResponseToCore } from "./to-core.js";

const scripted = (name: string) =>
  readFileSync(new URL(`../../../test/fixtures/scripted/${name}`, import.meta.url), "utf8");

function run(sse: string, options?: OpenAIDecodeOptions): StreamEvent[] {
  const decoder = createOpenAIStreamDecoder(options);
  return [...parseSse(sse).flatMap((message) => decoder.push(message)), ...decoder.finish()];
}

const chunk = (delta: object, extra: object = {}) =>
  `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`;

/** The parts of a stream's answer, whether it finished or not (some of these streams are cut on purpose). */
function shape(events: StreamEvent[]) {
  return foldEvents(events).answer.message.parts.map((part) => {
    if (part.type === "text") return ["text", part.text];
    if (part.type === "thinking") return ["thinking", part.thinking];
    if (part.type === "tool_call") return ["tool", part.id, part.name, part.input];
    return [part.type];
  });
}

describe("OpenAI stream decoder", () => {
  test("think tags cut across chunks, Chinese text: thinking then text", () => {
    const sse = ["<think>用户", "用中文说", "</think>", "\n\n", "你好"].map((content) => chunk({ content })).join("");
    expect(shape(run(`${sse}data: [DONE]\n\n`))).toEqual([
      ["thinking", "用户用中文说"],
      ["text", "\n\n你好"],
    ]);
  });

  test("inline think blocks interleaved with text stay in order; an unclosed one ends as thinking", () => {
    const sse = ["<th", "ink>a</think>m<think>", "b</think>", "<think>c"].map((content) => chunk({ content })).join("");
    expect(shape(run(sse))).toEqual([
      ["thinking", "a"],
      ["text", "m"],
      ["thinking", "b"],
      ["thinking", "c"],
    ]);
  });

  test("a reasoning field comes first and content is then plain text", () => {
    const events = run(scripted("openai-vllm-reasoning.sse"), { provider: "vllm" });
    const response = accumulate(events);
    expect(shape(events)).toEqual([
      ["thinking", "The user wants a greeting."],
      ["text", "Hello!"],
    ]);
    const thinking = response.message.parts[0];
    expect(thinking?.type === "thinking" && thinking.origin).toEqual({
      format: "openai",
      provider: "vllm",
      field: "reasoning",
      model: "Qwen/Qwen3-8B",
    });
    expect(response.usage).toEqual({ inputTokens: 12, outputTokens: 9 });
    expect(response.stopReason).toEqual({ unified: "end_turn", raw: "stop" });
  });

  test("Ollama-style parallel calls sharing index 0 are two calls", () => {
    const events = run(scripted("openai-ollama-parallel-index0.sse"));
    expect(shape(events)).toEqual([
      ["tool", "call_a1", "get_weather", { city: "Paris" }],
      ["tool", "call_b2", "get_time", { zone: "CET" }],
    ]);
    expect(accumulate(events).stopReason.unified).toBe("tool_use");
  });

  test("a continuation that repeats type and sends name '' does not rename; first index may be 1", () => {
    const sse =
      chunk({ tool_calls: [{ index: 1, id: "t1", type: "function", function: { name: "search", arguments: "" } }] }) +
      chunk({ tool_calls: [{ index: 1, type: "function", function: { name: "", arguments: '{"q":' } }] }) +
      chunk({ tool_calls: [{ index: 1, function: { arguments: '"x"}' } }] });
    expect(shape(run(sse))).toEqual([["tool", "t1", "search", { q: "x" }]]);
  });

  describe("parallel calls whose fragments do not come in a row", () => {
    const call = (index: number, fields: object) => ({ index, ...fields });
    const fragment = (index: number, text: string) => call(index, { function: { arguments: text } });
    const opener = (index: number, id: string, name: string) =>
      call(index, { id, type: "function", function: { name, arguments: "" } });

    test("every opener first, then the fragments interleaved: both calls keep their arguments", () => {
      const sse = [
        [opener(0, "call_a", "get_weather")],
        [opener(1, "call_b", "get_time")],
        [fragment(0, '{"x":')],
        [fragment(1, '{"y":')],
        [fragment(0, "1}")],
        [fragment(1, "2}")],
      ]
        .map((tool_calls) => chunk({ tool_calls }))
        .join("");
      const events = run(sse);
      expect(shape(events)).toEqual([
        ["tool", "call_a", "get_weather", { x: 1 }],
        ["tool", "call_b", "get_time", { y: 2 }],
      ]);
      // The first call still streams live, fragment by fragment.
      const deltas = events.filter((event) => event.type === "tool-input-delta");
      expect(deltas.map((event) => event.type === "tool-input-delta" && event.partialJson)).toEqual([
        '{"x":',
        "1}",
        '{"y":2}',
      ]);
    });

    test("a second call starting before the first's arguments are whole waits, then text after them keeps its place", () => {
      const sse =
        chunk({ tool_calls: [opener(0, "call_a", "a"), fragment(0, '{"p":')] }) +
        chunk({ tool_calls: [opener(1, "call_b", "b"), fragment(1, "{}")] }) +
        chunk({ tool_calls: [fragment(0, '"q"}')] }) +
        chunk({ content: "after" });
      expect(shape(run(sse))).toEqual([
        ["tool", "call_a", "a", { p: "q" }],
        ["tool", "call_b", "b", {}],
        ["text", "after"],
      ]);
    });

    test("calls sent one after the other still stream live, each opened when its first chunk comes", () => {
      const decoder = createOpenAIStreamDecoder();
      const push = (tool_calls: object[]) => parseSse(chunk({ tool_calls })).flatMap((m) => decoder.push(m));
      push([opener(0, "call_a", "a"), fragment(0, "{}")]);
      const second = push([opener(1, "call_b", "b")]);
      expect(second.map((event) => event.type)).toEqual(["block-end", "block-start"]);
    });

    test("property: any interleaving of any calls' fragments gives each call its whole input, in opener order", () => {
      const calls = fc.array(
        fc.record({
          input: fc.dictionary(fc.string({ maxLength: 4 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
          cuts: fc.array(fc.nat(), { maxLength: 4 }),
        }),
        { minLength: 1, maxLength: 3 },
      );
      fc.assert(
        fc.property(calls, fc.array(fc.nat()), (specs, picks) => {
          // Each call: its opener, then its JSON cut into fragments; the queues are merged in a random order
          // that keeps each call's own order.
          const queues = specs.map((spec, index) => {
            const json = JSON.stringify(spec.input);
            const pieces = cutAt(json, spec.cuts);
            return [
              opener(index, `call_${index}`, `tool_${index}`),
              ...pieces.filter((piece) => piece !== "").map((piece) => fragment(index, piece)),
            ];
          });
          const merged: object[] = [];
          let pick = 0;
          while (queues.some((queue) => queue.length > 0)) {
            const ready = queues.filter((queue) => queue.length > 0);
            // Openers keep their order: a call's opener goes out only after every earlier call's.
            const choices = ready.filter((queue) => {
              const first = queue[0] as { id?: string; index: number };
              return (
                first.id === undefined || queues.slice(0, first.index).every((q) => !(q[0] as { id?: string })?.id)
              );
            });
            merged.push(choices[(picks[pick++] ?? 0) % choices.length]!.shift()!);
          }
          const sse = merged.map((toolCall) => chunk({ tool_calls: [toolCall] })).join("");
          // The input as its JSON carries it (-0 arrives as 0).
          const sent = (input: unknown) => JSON.parse(JSON.stringify(input)) as unknown;
          expect(shape(run(sse))).toEqual(
            specs.map((spec, index) => ["tool", `call_${index}`, `tool_${index}`, sent(spec.input)]),
          );
        }),
      );
    });

    test("a name that comes after the id is the call's name", () => {
      const sse =
        chunk({ tool_calls: [call(0, { id: "call_1", type: "function", function: { arguments: "" } })] }) +
        chunk({ tool_calls: [call(0, { function: { name: "get_weather" } })] }) +
        chunk({ tool_calls: [fragment(0, '{"city":"Paris"}')] });
      expect(shape(run(sse))).toEqual([["tool", "call_1", "get_weather", { city: "Paris" }]]);
    });
  });

  test("MiniMax inline think then a text tool call", () => {
    const events = run(scripted("openai-minimax-inline-think-tool-call.sse"), { textToolCalls: "minimax" });
    const parts = shape(events);
    expect(parts[0]).toEqual(["thinking", "Need the weather."]);
    expect(parts.find((part) => part[0] === "tool")?.slice(2)).toEqual(["get_weather", { city: "Paris" }]);
  });

  test("GLM tool call emitted as text becomes a tool call after the prose", () => {
    const parts = shape(run(scripted("openai-glm-text-tool-call.sse"), { textToolCalls: "glm" }));
    expect(parts[0]).toEqual(["text", "Let me check."]);
    expect(parts[1]?.slice(2)).toEqual(["get_weather", { city: "Paris" }]);
  });

  test("a text tool call recovered from a reply that finished with 'stop' ends as tool_use", () => {
    const stop = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
    const sse = `${chunk({ content: "Let me check." })}${stop}`;
    const glm = run(scripted("openai-glm-text-tool-call.sse"), { textToolCalls: "glm" });
    expect(accumulate(glm).stopReason).toEqual({ unified: "tool_use", raw: "stop" });
    // Without a recovered call the same finish stays end_turn.
    expect(accumulate(run(`${sse}data: [DONE]\n\n`, { textToolCalls: "glm" })).stopReason.unified).toBe("end_turn");
  });

  test("a body that ends with neither [DONE] nor a finish_reason ends with an error, keeping what came", () => {
    const events = run(chunk({ content: "Partial" }));
    expect(events.at(-1)).toMatchObject({ type: "error", error: { type: "api_error" } });
    expect(events.some((event) => event.type === "finish")).toBe(false);
    expect(shape(events)).toEqual([["text", "Partial"]]);
    // A finish_reason without [DONE] (some servers omit it) is a complete answer.
    const stop = `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
    expect(run(chunk({ content: "Whole" }) + stop).at(-1)).toMatchObject({ type: "finish" });
  });

  test("an error chunk mid-stream ends the stream with an error event", () => {
    const events = run(scripted("openai-error-midstream.sse"));
    expect(events[events.length - 1]).toEqual({
      type: "error",
      error: { type: "overloaded_error", message: "upstream overloaded", status: 503 },
    });
    expect(events.filter((event) => event.type === "finish")).toEqual([]);
    expect(shape(events)).toEqual([["text", "Partial ans"]]);
  });

  test("an SSE error event maps its status", () => {
    const events = run(
      `${chunk({ content: "a" })}event: error\ndata: {"error":{"message":"slow down","type":"rate_limit_exceeded"}}\n\n`,
    );
    expect(events.at(-1)).toEqual({
      type: "error",
      error: { type: "rate_limit_error", message: "slow down", status: 429 },
    });
  });

  test("usage on the finish chunk, in x_groq, and cached tokens", () => {
    const finish = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "length" }], x_groq: { usage: { prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60 } } } })}\n\n`;
    const events = run(chunk({ content: "x" }) + finish);
    expect(events.at(-1)).toEqual({
      type: "finish",
      stopReason: { unified: "max_tokens", raw: "length" },
      usage: { inputTokens: 40, outputTokens: 7, cacheReadInputTokens: 60 },
    });
  });

  test("reasoning and reasoning_details with the same text are read once", () => {
    const sse =
      chunk({ reasoning: "abc", reasoning_details: [{ type: "reasoning.text", text: "abc", index: 0 }] }) +
      chunk({ content: "ok" });
    expect(shape(run(sse))).toEqual([
      ["thinking", "abc"],
      ["text", "ok"],
    ]);
  });

  test("a finish_reason a server made up still ends the turn (Anthropic clients know no other), its raw value kept", () => {
    const sse = `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: { content: "a" }, finish_reason: "eos_token" }] })}\n\n`;
    expect(accumulate(run(sse)).stopReason).toEqual({ unified: "end_turn", raw: "eos_token" });
  });

  describe("reasoning in two places, and whitespace before a tool call", () => {
    const toolCall = { id: "call_1", type: "function", function: { name: "f", arguments: '{"a":1}' } };
    const answer = (message: object) => ({
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
    });

    test("think tags left in the content beside a reasoning field are thinking, in order", () => {
      const sse = chunk({ reasoning_content: "A" }) + chunk({ content: "<think>B</think>C<think>D</think>" });
      expect(shape(run(`${sse}data: [DONE]\n\n`))).toEqual([
        ["thinking", "A"],
        ["thinking", "B"],
        ["text", "C"],
        ["thinking", "D"],
      ]);
    });

    test("whitespace alone opens no text block before a tool call, goes in front of text, and is kept when it is all", () => {
      // One chunk holding the whole message, as a whole answer is read.
      const parts = (message: object) => shape(run(`${chunk(message)}data: [DONE]\n\n`));
      expect(parts({ content: "<think>T</think>\n\n", tool_calls: [toolCall] })).toEqual([
        ["thinking", "T"],
        ["tool", "call_1", "f", { a: 1 }],
      ]);
      expect(parts({ content: "\n\n", tool_calls: [toolCall] })).toEqual([["tool", "call_1", "f", { a: 1 }]]);
      expect(parts({ content: "<think>T</think>\n\nHi" })).toEqual([
        ["thinking", "T"],
        ["text", "\n\nHi"],
      ]);
      expect(parts({ content: "  " })).toEqual([["text", "  "]]);
    });

    test("property: a reasoning field, tags and whitespace in the content, a tool call, any chunking: the whole answer", () => {
      const piece = fc.constantFrom("<think>", "</think>", "\n\n", " ", "a", "b c", "<", "think>", "</");
      fc.assert(
        fc.property(
          fc.option(fc.string({ maxLength: 6 }), { nil: undefined }),
          fc.array(piece, { maxLength: 8 }),
          fc.boolean(),
          fc.array(fc.nat(), { maxLength: 6 }),
          (reasoning, pieces, withTool, cuts) => {
            const content = pieces.join("");
            const message = {
              content,
              ...(reasoning === undefined ? {} : { reasoning_content: reasoning }),
              ...(withTool ? { tool_calls: [toolCall] } : {}),
            };
            const whole = openaiResponseToCore(answer(message) as never).value;
            const contentPieces = cutAt(content, cuts);
            let sse = reasoning === undefined ? "" : chunk({ reasoning_content: reasoning });
            for (const text of contentPieces) if (text !== "") sse += chunk({ content: text });
            if (withTool) sse += chunk({ tool_calls: [{ index: 0, ...toolCall }] });
            sse += `data: ${JSON.stringify({ id: "c", model: "m", choices: [{ index: 0, delta: {}, finish_reason: "stop" }] })}\n\n`;
            const streamed = accumulate(run(sse));
            expect(streamed.message).toEqual(whole.message);
            expect(streamed.stopReason).toEqual(whole.stopReason);
            const texts = streamed.message.parts.filter((part) => part.type === "text");
            if (streamed.message.parts.length > 1) for (const part of texts) expect(part.text.trim()).not.toBe("");
          },
        ),
        { numRuns: 300 },
      );
    });
  });
});
