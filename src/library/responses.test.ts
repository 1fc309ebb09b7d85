import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import {
  accumulate,
  type ConversationRequest,
  codecs,
  fromAnthropicMessages,
  fromResponsesMessages,
  fromResponsesRequest,
  fromResponsesResponse,
  readStream,
  repair,
  responsesRepairTarget,
  responsesStreamDecoder,
  responsesStreamEncoder,
  toResponsesMessages,
  toResponsesRequest,
  toResponsesResponse,
} from "../index.js";

const fixture = (path: string) => readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), "utf8");
/** A `.chunks.jsonl` recording: the events as the OpenAI SDK yields them, parsed. */
const events = (path: string) =>
  fixture(path)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const answerWithReasoning = () => JSON.parse(fixture("openai-responses/gpt-5-mini-reasoning-encrypted.json"));

describe("the Responses API as a library format", () => {
  test("a provider's reasoning goes back to it as the item it made, to another provider as text", () => {
    const body = answerWithReasoning();
    const item = body.output.find((output: { type: string }) => output.type === "reasoning");
    const answer = fromResponsesResponse(body, { provider: "openai" }).value;
    const request: ConversationRequest = {
      model: "gpt-5-mini",
      messages: [{ role: "user", parts: [{ type: "text", text: "q" }] }, answer.message],
    };
    const back = toResponsesRequest(request, { provider: "openai" }).value;
    expect(back.input).toContainEqual(
      expect.objectContaining({ type: "reasoning", id: item.id, encrypted_content: item.encrypted_content }),
    );
    expect(back.store).toBe(false);
    const elsewhere = toResponsesRequest(request, { provider: "azure" });
    expect(elsewhere.value.input).not.toContainEqual(expect.objectContaining({ type: "reasoning" }));
    expect(elsewhere.lossy.map((entry) => entry.code)).toContain("thinking-to-text");
    const dropped = toResponsesRequest(request, { provider: "azure", reasoning: "drop" });
    expect(dropped.lossy.map((entry) => entry.code)).toContain("thinking-dropped");
  });

  test("a history read for a provider gives that provider its reasoning items back; read for none, as text", () => {
    const body = answerWithReasoning();
    const history = [{ role: "user", content: "q" }, ...body.output];
    const read = fromResponsesMessages(history, { provider: "openai" });
    const item = body.output.find((output: { type: string }) => output.type === "reasoning");
    expect(toResponsesMessages(read.value, { provider: "openai" }).value).toContainEqual(
      expect.objectContaining({ type: "reasoning", id: item.id, encrypted_content: item.encrypted_content }),
    );
    const unowned = toResponsesMessages(fromResponsesMessages(history).value, { provider: "openai" });
    expect(unowned.value).not.toContainEqual(expect.objectContaining({ type: "reasoning" }));
    expect(repair(read.value, responsesRepairTarget({ provider: "openai" })).report).toEqual([]);
  });

  test("another format's history becomes Responses input items: calls, their outputs, the user's text", () => {
    const history = fromAnthropicMessages([
      { role: "user", content: "list /tmp" },
      { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "bash", input: { command: "ls" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "a.txt" }] },
    ]).value;
    expect(toResponsesMessages(history).value).toEqual([
      { role: "user", content: "list /tmp" },
      { type: "function_call", call_id: "toolu_1", name: "bash", arguments: '{"command":"ls"}' },
      { type: "function_call_output", call_id: "toolu_1", output: "a.txt" },
    ]);
  });

  test("a recorded stream read from the SDK's events gives the answer the whole response gives", async () => {
    const recorded = events("openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl");
    const stream = readStream(
      (async function* () {
        yield* recorded;
      })(),
      responsesStreamDecoder({ provider: "openai" }),
    );
    const answer = await stream.message();
    // The whole response the stream ends with (its reasoning sealed anew: OpenAI encrypts each copy apart).
    const completed = recorded.find((event) => event.type === "response.completed")!.response;
    const whole = fromResponsesResponse(completed, { provider: "openai" }).value;
    const [thinking, call] = answer.message.parts;
    expect(answer.message.parts.map((part) => part.type)).toEqual(["thinking", "tool_call"]);
    expect(thinking).toMatchObject({
      thinking: whole.message.parts[0]?.type === "thinking" ? whole.message.parts[0].thinking : undefined,
      origin: { format: "responses", provider: "openai", id: expect.stringMatching(/^rs_/) },
    });
    expect(call).toEqual(whole.message.parts[1]);
    expect(answer.stopReason).toEqual(whole.stopReason);
    expect(answer.usage).toEqual(whole.usage);
  });

  test("an error mid-stream and a failed response reject with what they report, never as a finished answer", async () => {
    const midstream = events("openai-responses/gpt-5-nano-error-midstream.chunks.jsonl");
    await expect(
      readStream(
        midstream
          .map((event) => JSON.stringify(event))
          .map(sse)
          .join(""),
        decoder(),
      ).message(),
    ).rejects.toMatchObject({ name: "IncompleteStreamError", reason: "error" });
    const failed = events("openai-responses/gpt-4o-mini-response-failed.chunks.jsonl").at(-1)!.response;
    expect(() => fromResponsesResponse(failed)).toThrow(
      expect.objectContaining({ name: "UpstreamError", type: "rate_limit_error" }),
    );
    const cut = events("openai-responses/gpt-5.1-tool-call.chunks.jsonl").slice(0, 5);
    await expect(
      readStream(
        cut
          .map((event) => JSON.stringify(event))
          .map(sse)
          .join(""),
        decoder(),
      ).message(),
    ).rejects.toMatchObject({ name: "IncompleteStreamError", reason: "error" });
  });

  test("input is checked with the field's path; Responses has no presets, and a name given is refused", () => {
    expect(() => fromResponsesRequest({ model: "m", input: [{ type: "function_call", name: "f" }] })).toThrow(
      expect.objectContaining({ name: "InvalidRequestError", path: expect.stringMatching(/^input\[0\]/) }),
    );
    expect(() => fromResponsesResponse({ id: "resp_1", object: "response" })).toThrow(
      expect.objectContaining({ path: "output" }),
    );
    expect(() => fromResponsesMessages([{ type: "function_call_output" }])).toThrow(
      expect.objectContaining({ path: expect.stringMatching(/^messages\[0\]/) }),
    );
    expect(codecs.responses.presets).toEqual([]);
    expect(() => responsesStreamDecoder({ preset: "openai" } as never)).toThrow(/unknown preset "openai"/);
  });

  test("an answer streamed to a Responses client comes back in its history as it was, for its provider", () => {
    const decode = responsesStreamDecoder({ provider: "openai" });
    const recorded = events("openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl");
    const decoded = recorded.flatMap((event) =>
      decode.push({ event: String(event.type), data: JSON.stringify(event) }),
    );
    decoded.push(...decode.finish());
    const original = accumulate(decoded);
    const encoder = responsesStreamEncoder({ answerId: "resp_1", createdAt: 1 });
    const text = decoded.map((event) => encoder.encode(event)).join("") + encoder.end();
    const completed = text
      .split("\n\n")
      .map((frame) => /^data: (.*)$/m.exec(frame)?.[1])
      .filter((data) => data !== undefined)
      .map((data) => JSON.parse(data!))
      .find((event) => event.type === "response.completed");
    const whole = toResponsesResponse(original, { answerId: "resp_1", createdAt: 1 }).value;
    expect(completed.response.output).toEqual(whole.output);
    // The client echoes the output next turn: Parley's envelope tells whose reasoning it is.
    const echoed = fromResponsesMessages([{ role: "user", content: "q" }, ...completed.response.output]).value;
    const [thinking, call] = echoed[1]!.parts;
    const [originalThinking, originalCall] = original.message.parts;
    expect(call).toMatchObject({ id: originalCall?.type === "tool_call" ? originalCall.id : "", type: "tool_call" });
    expect(thinking?.type === "thinking" && thinking.origin).toMatchObject(
      originalThinking?.type === "thinking" ? (originalThinking.origin as object) : {},
    );
    const back = toResponsesMessages(echoed, { provider: "openai" }).value;
    const item = recorded.find(
      (event) => event.type === "response.output_item.done" && (event.item as { type: string }).type === "reasoning",
    )!.item as { id: string; encrypted_content: string };
    expect(back).toContainEqual(
      expect.objectContaining({ type: "reasoning", id: item.id, encrypted_content: item.encrypted_content }),
    );
  });
});

function sse(data: string): string {
  return `data: ${data}\n\n`;
}

function decoder() {
  return responsesStreamDecoder();
}
