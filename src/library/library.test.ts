import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { WIRE_FORMATS } from "../core/parts.js";
import * as root from "../index.js";
import {
  anthropicRepairTarget,
  anthropicStreamDecoder,
  codecs,
  fromAnthropicMessages,
  fromAnthropicResponse,
  fromOpenAIResponse,
  normalize,
  openaiStreamDecoder,
  readStream,
  repair,
  toAnthropicRequest,
  toOpenAIRequest,
} from "../index.js";

const fixture = (path: string) => readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), "utf8");

/** The prefix of a format's names: one line per format, as in `codecs.ts`. */
const PREFIX: Record<string, string> = {
  anthropic: "Anthropic",
  openai: "OpenAI",
  responses: "Responses",
  gemini: "Gemini",
};

describe("the naming scheme", () => {
  test("every registered format has its codec by id and its flat names, the very same functions", () => {
    const exported = root as unknown as Record<string, unknown>;
    for (const id of WIRE_FORMATS) {
      const codec = codecs[id] as unknown as Record<string, unknown>;
      const name = PREFIX[id];
      expect(name, `a naming prefix for ${id}`).toBeDefined();
      for (const thing of ["Request", "Response", "Messages"]) {
        expect(exported[`from${name}${thing}`]).toBe(codec[`from${thing}`]);
        expect(exported[`to${name}${thing}`]).toBe(codec[`to${thing}`]);
      }
      for (const member of ["streamDecoder", "streamEncoder", "repairTarget"]) {
        expect(exported[`${id}${member[0]!.toUpperCase()}${member.slice(1)}`]).toBe(codec[member]);
      }
      expect(exported[`${id}Presets`]).toBe(codec.presets);
    }
  });

  test("the root exports the library, not the gateway's internals", () => {
    const names = Object.keys(root);
    // Each format adds its twelve names (four formats); the gateway's internals would add dozens.
    expect(names.length).toBeLessThan(72);
    for (const internal of ["startGateway", "KeyChecker", "loadConfig", "openStore", "coreToAnthropicRequest"])
      expect(names).not.toContain(internal);
  });
});

describe("checked input", () => {
  test("repair given wire messages names the field and says what to do, instead of a TypeError", () => {
    const wire = [{ role: "user", content: "hi" }];
    expect(() => repair(wire as never, anthropicRepairTarget())).toThrow(
      expect.objectContaining({
        name: "InvalidRequestError",
        path: "messages[0].parts",
        message: expect.stringMatching(/fromAnthropicMessages/),
      }),
    );
    expect(() => repair([], "anthropic" as never)).toThrow(expect.objectContaining({ path: "target" }));
    expect(() => normalize("x" as never)).toThrow(expect.objectContaining({ path: "entries" }));
  });

  test("a format's readers give the paths its validator and the CLI give", () => {
    expect(() => fromAnthropicMessages([{ role: "user", content: [{ type: "text" }] }])).toThrow(
      expect.objectContaining({ path: "messages[0].content[0].text" }),
    );
    expect(() => fromOpenAIResponse({ choices: [] })).toThrow(expect.objectContaining({ path: "choices" }));
    expect(() => toAnthropicRequest({ model: "m", messages: [{ role: "bot", parts: [] }] } as never)).toThrow(
      expect.objectContaining({ path: "messages[0].role" }),
    );
  });

  test("an error document in place of an answer throws an UpstreamError of its type", () => {
    const body = { type: "error", error: { type: "overloaded_error", message: "Overloaded" } };
    expect(() => fromAnthropicResponse(body)).toThrow(
      expect.objectContaining({ name: "UpstreamError", type: "overloaded_error", retryable: true }),
    );
  });

  test("a misspelt preset is refused naming the known ones", () => {
    expect(() => openaiStreamDecoder({ preset: "deepseeek" as never })).toThrow(/unknown preset "deepseeek".*deepseek/);
  });
});

describe("a preset configures both directions", () => {
  test("DeepSeek's reasoning read with its preset goes back to it in reasoning_content, to another as tags", () => {
    const answer = fromOpenAIResponse(JSON.parse(fixture("deepseek/deepseek-reasoner-tool-call.json")), {
      preset: "deepseek",
    }).value;
    const thinking = answer.message.parts.find((part) => part.type === "thinking");
    expect(thinking?.type === "thinking" && thinking.origin).toMatchObject({ provider: "deepseek" });
    const request = {
      model: "m",
      messages: [{ role: "user" as const, parts: [{ type: "text" as const, text: "hi" }] }, answer.message],
    };
    const toDeepSeek = toOpenAIRequest(request, { preset: "deepseek" }).value.messages[1]!;
    expect(toDeepSeek.reasoning_content).toBe(thinking?.type === "thinking" ? thinking.thinking : undefined);
    const toVllm = toOpenAIRequest(request, { preset: "vllm" }).value.messages[1]!;
    expect(toVllm.reasoning_content).toBeUndefined();
  });

  test("an Anthropic-format provider's signature goes back to it alone; Anthropic gets its thinking as text", () => {
    const body = {
      id: "m",
      type: "message",
      role: "assistant",
      model: "deepseek-chat",
      content: [
        { type: "thinking", thinking: "hmm", signature: "deepseek-own-signature" },
        { type: "text", text: "done" },
      ],
      stop_reason: "end_turn",
      usage: { input_tokens: 1, output_tokens: 2 },
    };
    const answer = fromAnthropicResponse(body, { preset: "deepseek" }).value;
    const history = [{ role: "user" as const, parts: [{ type: "text" as const, text: "q" }] }, answer.message];
    const back = toAnthropicRequest({ model: "m", messages: history }, { preset: "deepseek" }).value;
    expect(back.messages[1]!.content).toContainEqual(expect.objectContaining({ signature: "deepseek-own-signature" }));
    const forAnthropic = repair(history, anthropicRepairTarget());
    expect(forAnthropic.report.map((entry) => entry.action)).toContain("thinking-to-text");
    expect(repair(history, anthropicRepairTarget({ preset: "deepseek" })).report).toEqual([]);
  });
});

describe("readStream", () => {
  const cut =
    'event: message_start\ndata: {"type":"message_start","message":{"id":"m","model":"c","usage":{"input_tokens":1}}}\n\n' +
    'event: content_block_start\ndata: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}\n\n' +
    'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"half"}}\n\n';

  test("a recorded stream, cut into bytes anywhere, gives its events and the whole answer", async () => {
    const sse = fixture("anthropic/claude-sonnet-4-thinking-tool-use.sse");
    const bytes = new TextEncoder().encode(sse);
    const pieces = [bytes.slice(0, 7), bytes.slice(7, 400), bytes.slice(400)];
    const stream = readStream(
      (async function* () {
        yield* pieces;
      })(),
      anthropicStreamDecoder(),
    );
    const seen: string[] = [];
    for await (const event of stream) seen.push(event.type);
    expect(seen[0]).toBe("message-start");
    expect(seen.at(-1)).toBe("finish");
    const message = await stream.message();
    expect(message.stopReason.unified).toBe("tool_use");
    expect(message.message.parts.map((part) => part.type)).toEqual(["thinking", "tool_call"]);
  });

  test("a body cut short ends in an error event and message() rejects with the partial answer", async () => {
    const stream = readStream(cut, anthropicStreamDecoder());
    const events = [];
    for await (const event of stream) events.push(event);
    expect(events.at(-1)).toMatchObject({ type: "error" });
    await expect(stream.message()).rejects.toMatchObject({
      name: "IncompleteStreamError",
      reason: "error",
      partial: { message: { parts: [{ type: "text", text: "half" }] } },
    });
  });

  test("a connection that fails mid-body keeps what came and rejects", async () => {
    const failing = (async function* () {
      yield new TextEncoder().encode(cut);
      throw new Error("socket hang up");
    })();
    await expect(readStream(failing, anthropicStreamDecoder()).message()).rejects.toMatchObject({
      reason: "error",
      message: expect.stringMatching(/socket hang up/),
    });
  });

  test("an SDK's parsed events read as the SSE they were; a non-2xx response throws an UpstreamError", async () => {
    const sdkEvents = [
      { id: "c", object: "chat.completion.chunk", model: "m", choices: [{ index: 0, delta: { content: "hi" } }] },
      {
        id: "c",
        object: "chat.completion.chunk",
        model: "m",
        choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
      },
    ];
    const answer = await readStream(
      (async function* () {
        yield* sdkEvents;
      })(),
      openaiStreamDecoder(),
    ).message();
    expect(answer.message.parts).toEqual([{ type: "text", text: "hi" }]);
    const refused = new Response(JSON.stringify({ error: { message: "Rate limit reached" } }), { status: 429 });
    await expect(readStream(refused, openaiStreamDecoder()).message()).rejects.toMatchObject({
      name: "UpstreamError",
      type: "rate_limit_error",
      upstreamStatus: 429,
      message: expect.stringMatching(/Rate limit reached/),
    });
  });
});
