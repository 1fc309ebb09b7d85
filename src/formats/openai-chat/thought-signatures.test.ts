import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import {
  type ConversationRequest,
  decodeOriginSignature,
  geminiSignature,
  type Message,
  type Part,
  SKIP_SIGNATURE,
  type StreamEvent,
  signaturePart,
} from "../../core/index.js";
import { accumulate } from "../../stream/accumulate.js";
import { SseDecoder } from "../../stream/sse.js";
import { detectPreset, PRESETS } from "./compat.js";
import { coreToOpenAIRequest, coreToOpenAIResponse } from "./from-core.js";
import { openaiMessagesToCore } from "./messages-to-core.js";
import { createOpenAIStreamDecoder } from "./stream-decoder.js";
import { createOpenAIStreamEncoder } from "./stream-encoder.js";
import { openaiResponseToCore } from "./to-core.js";
import { openaiChatView } from "./view.js";
import type { OpenAIChatResponse, OpenAIMessage, OpenAIToolCall } from "./wire-types.js";

/**
 * Gemini's thought signatures through Google's OpenAI-compatible endpoints (`extra_content.google.thought_signature`
 * on a call, on the message, on a stream's signature-only last delta; Vertex AI's under `vertex`): read into the
 * core as the Gemini API's own are, and back on exactly the part that carried them.
 */

const PROVIDER = "google-chat";
const SIG_CALL = "CiQB0e2Kb+/first==";
const SIG_TEXT = "CiQB0e2Kb/text+==";
const google = (signature: string) => ({ google: { thought_signature: signature } });

function whole(message: Partial<OpenAIMessage>, finish = "stop"): OpenAIChatResponse {
  return {
    id: "chatcmpl-g",
    object: "chat.completion",
    created: 1,
    model: "gemini-3-pro-preview",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
  };
}

const call = (id: string, name: string, args: object, signature?: string): OpenAIToolCall => ({
  id,
  type: "function",
  function: { name, arguments: JSON.stringify(args) },
  ...(signature === undefined ? {} : { extra_content: google(signature) }),
});

const frame = (delta: object, finish: string | null = null, extra: object = {}) =>
  `data: ${JSON.stringify({ id: "chatcmpl-g", object: "chat.completion.chunk", created: 1, model: "gemini-3-pro-preview", choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`;

function decode(sse: string, cuts: readonly number[] = []): StreamEvent[] {
  const sseDecoder = new SseDecoder();
  const decoder = createOpenAIStreamDecoder({ provider: PROVIDER });
  const out: StreamEvent[] = [];
  for (const piece of cutAt(sse, cuts))
    for (const message of sseDecoder.push(piece)) out.push(...decoder.push(message));
  for (const message of sseDecoder.finish?.() ?? []) out.push(...decoder.push(message));
  out.push(...decoder.finish());
  return out;
}

/** What a part is, for a reader: a signature by what it rode on, text, a call. */
function shape(parts: readonly Part[]) {
  return parts.map((part) => {
    const signature = geminiSignature(part);
    if (signature !== undefined)
      return ["signature", signature.sealed, signature.id ?? signature.field ?? "after-text", signature.provider];
    if (part.type === "text") return ["text", part.text];
    if (part.type === "tool_call") return ["call", part.id, part.name, part.input];
    return [part.type];
  });
}

const request = (messages: Message[], stream = false): ConversationRequest => ({
  model: "gemini-3-pro-preview",
  messages,
  stream,
});

describe("reading Google's signatures", () => {
  test("a whole answer: the first of parallel calls signed, the message's own before its text", () => {
    const body = whole(
      {
        content: "Reading both.",
        extra_content: google(SIG_TEXT),
        tool_calls: [call("fc-1", "read", { path: "a" }, SIG_CALL), call("fc-2", "read", { path: "b" })],
      },
      "tool_calls",
    );
    const parts = openaiResponseToCore(body, { provider: PROVIDER }).value.message.parts;
    expect(shape(parts)).toEqual([
      ["signature", SIG_TEXT, "next-text", PROVIDER],
      ["text", "Reading both."],
      ["signature", SIG_CALL, "fc-1", PROVIDER],
      ["call", "fc-1", "read", { path: "a" }],
      ["call", "fc-2", "read", { path: "b" }],
    ]);
    // The same thing the Gemini API's own signature is in the core, bound to the provider that made it.
    expect(parts[2]).toEqual(signaturePart(SIG_CALL, PROVIDER, { call: "fc-1" }));
  });

  test("a stream: calls whole without `index`, a text's signature on a last delta holding only extra_content", () => {
    const sse =
      frame({ role: "assistant", content: "Let me " }) +
      frame({ content: "look." }) +
      frame({
        tool_calls: [
          {
            id: "fc-1",
            type: "function",
            function: { name: "read", arguments: '{"path":"a"}' },
            extra_content: google(SIG_CALL),
          },
        ],
      }) +
      frame({ tool_calls: [{ id: "fc-2", type: "function", function: { name: "read", arguments: '{"path":"b"}' } }] }) +
      frame({ extra_content: google(SIG_TEXT) }) +
      frame({}, "tool_calls", { usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } }) +
      "data: [DONE]\n\n";
    expect(shape(accumulate(decode(sse)).message.parts)).toEqual([
      ["text", "Let me look."],
      ["signature", SIG_CALL, "fc-1", PROVIDER],
      ["call", "fc-1", "read", { path: "a" }],
      ["call", "fc-2", "read", { path: "b" }],
      ["signature", SIG_TEXT, "after-text", PROVIDER],
    ]);
  });

  test("a text's signature after its text rides on the text; with the delta that opens it, it stands before", () => {
    const after =
      frame({ content: "Hi" }) + frame({ content: "!" }) + frame({ extra_content: google(SIG_TEXT) }, "stop");
    expect(shape(accumulate(decode(after)).message.parts)).toEqual([
      ["text", "Hi!"],
      ["signature", SIG_TEXT, "after-text", PROVIDER],
    ]);
    const first = frame({ content: "Hi", extra_content: google(SIG_TEXT) }) + frame({ content: "!" }, "stop");
    expect(shape(accumulate(decode(first)).message.parts)).toEqual([
      ["signature", SIG_TEXT, "next-text", PROVIDER],
      ["text", "Hi!"],
    ]);
  });

  test("Vertex AI's key reads the same", () => {
    const body = whole(
      {
        content: null,
        tool_calls: [{ ...call("fc-1", "read", {}), extra_content: { vertex: { thought_signature: SIG_CALL } } }],
      },
      "tool_calls",
    );
    expect(shape(openaiResponseToCore(body, { provider: "vertex-chat" }).value.message.parts)).toEqual([
      ["signature", SIG_CALL, "fc-1", "vertex-chat"],
      ["call", "fc-1", "read", {}],
    ]);
  });

  test("tool deltas without `index`: no id and no new name go on with the last call; an id or a new name is the next", () => {
    const sse =
      frame({ tool_calls: [{ id: "fc-1", function: { name: "read", arguments: '{"pa' } }] }) +
      frame({ tool_calls: [{ function: { arguments: 'th":"a"}' } }] }) +
      frame({ tool_calls: [{ function: { name: "grep", arguments: '{"q":' } }] }) +
      frame({ tool_calls: [{ function: { arguments: '"x"}' } }] }) +
      frame({ tool_calls: [{ id: "fc-3", function: { name: "grep", arguments: "{}" } }] }) +
      frame({}, "tool_calls");
    expect(shape(accumulate(decode(sse)).message.parts)).toEqual([
      ["call", "fc-1", "read", { path: "a" }],
      ["call", "call_1", "grep", { q: "x" }],
      ["call", "fc-3", "grep", {}],
    ]);
  });

  test("a call's signature that comes after its opener still goes before it when the call is held, after it when live", () => {
    const held =
      frame({ tool_calls: [{ id: "fc-1", function: { arguments: "{}" } }] }) +
      frame({ tool_calls: [{ function: { name: "read" }, extra_content: google(SIG_CALL) }] }) +
      frame({}, "tool_calls");
    expect(shape(accumulate(decode(held)).message.parts)).toEqual([
      ["signature", SIG_CALL, "fc-1", PROVIDER],
      ["call", "fc-1", "read", {}],
    ]);
    const live =
      frame({ tool_calls: [{ id: "fc-1", function: { name: "read", arguments: "{" } }] }) +
      frame({ tool_calls: [{ function: { arguments: "}" }, extra_content: google(SIG_CALL) }] }) +
      frame({}, "tool_calls");
    expect(shape(accumulate(decode(live)).message.parts)).toEqual([
      ["call", "fc-1", "read", {}],
      ["signature", SIG_CALL, "fc-1", PROVIDER],
    ]);
  });
});

/** One answer of Google's endpoint: a text, calls (the first signed), and where the text's signature comes. */
const answer = fc.record({
  text: fc.option(fc.stringMatching(/^[a-z .,!]{1,16}$/), { nil: undefined }),
  textSigned: fc.boolean(),
  calls: fc.array(fc.dictionary(fc.constantFrom("a", "b", "c"), fc.oneof(fc.integer(), fc.string({ maxLength: 5 }))), {
    maxLength: 3,
  }),
  signatureWithText: fc.boolean(),
});
type Answer = typeof answer extends fc.Arbitrary<infer T> ? T : never;

/** The answer as Google streams it, its text and each call's arguments cut where `points` say. */
function streamOf(drawn: Answer, points: readonly number[]): string {
  const frames: string[] = [];
  const textSignature = drawn.text !== undefined && drawn.textSigned ? SIG_TEXT : undefined;
  if (drawn.text !== undefined)
    cutAt(drawn.text, points)
      .filter((piece) => piece !== "")
      .forEach((content, index) => {
        const withSignature = index === 0 && drawn.signatureWithText && textSignature !== undefined;
        frames.push(frame(withSignature ? { content, extra_content: google(textSignature) } : { content }));
      });
  drawn.calls.forEach((args, index) => {
    const pieces = cutAt(JSON.stringify(args), points).filter((piece) => piece !== "");
    pieces.forEach((piece, pieceIndex) => {
      const first = pieceIndex === 0;
      const delta = first
        ? {
            id: `fc-${index}`,
            type: "function",
            function: { name: "read", arguments: piece },
            ...(index === 0 ? { extra_content: google(SIG_CALL) } : {}),
          }
        : { function: { arguments: piece } };
      frames.push(frame({ tool_calls: [delta] }));
    });
  });
  if (textSignature !== undefined && !drawn.signatureWithText)
    frames.push(frame({ extra_content: google(textSignature) }));
  frames.push(frame({}, drawn.calls.length > 0 ? "tool_calls" : "stop"), "data: [DONE]\n\n");
  return frames.join("");
}

function wholeOf(drawn: Answer): OpenAIChatResponse {
  const textSignature = drawn.text !== undefined && drawn.textSigned ? SIG_TEXT : undefined;
  return whole(
    {
      content: drawn.text ?? null,
      ...(textSignature === undefined ? {} : { extra_content: google(textSignature) }),
      ...(drawn.calls.length === 0
        ? {}
        : {
            tool_calls: drawn.calls.map((args, index) =>
              call(`fc-${index}`, "read", args, index === 0 ? SIG_CALL : undefined),
            ),
          }),
    },
    drawn.calls.length > 0 ? "tool_calls" : "stop",
  );
}

describe("any chunking gives the same answer", () => {
  test("property: cut into any deltas and any bytes, a stream folds to what it folds to whole", () => {
    fc.assert(
      fc.property(
        answer,
        fc.array(fc.nat(), { maxLength: 5 }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (drawn, points, cuts) => {
          const streamed = accumulate(decode(streamOf(drawn, points), cuts)).message;
          const reference = accumulate(decode(streamOf(drawn, []))).message;
          expect(streamed).toEqual(reference);
          // Each signature on its part: the first call's before it, the text's at the message.
          const signatures = streamed.parts.flatMap((part) => {
            const signature = geminiSignature(part);
            return signature === undefined ? [] : [signature.id || "text"];
          });
          const text = drawn.text !== undefined && drawn.textSigned;
          expect(signatures.sort()).toEqual(
            [...(drawn.calls.length > 0 ? ["fc-0"] : []), ...(text ? ["text"] : [])].sort(),
          );
          // The signature on the delta that opens the text is where a whole answer has it.
          if (drawn.signatureWithText || !text)
            expect(streamed).toEqual(openaiResponseToCore(wholeOf(drawn), { provider: PROVIDER }).value.message);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe("writing them back", () => {
  const answered = (provider: string) =>
    openaiResponseToCore(
      whole(
        {
          content: "Reading both.",
          extra_content: google(SIG_TEXT),
          tool_calls: [call("fc-1", "read", { path: "a" }, SIG_CALL), call("fc-2", "read", { path: "b" })],
        },
        "tool_calls",
      ),
      { provider },
    ).value.message;
  const user: Message = { role: "user", parts: [{ type: "text", text: "Read a and b." }] };
  const results: Message = {
    role: "user",
    parts: [
      { type: "tool_result", toolCallId: "fc-1", content: "A" },
      { type: "tool_result", toolCallId: "fc-2", content: "B" },
    ],
  };

  test("to the provider that made them: its bytes on exactly the call and the message they rode on", () => {
    const sent = coreToOpenAIRequest(request([user, answered(PROVIDER), results]), {
      reasoning: "think-tags",
      compat: PRESETS["gemini-openai"]!,
      provider: PROVIDER,
    });
    const assistant = sent.value.messages[1]!;
    expect(assistant).toEqual({
      role: "assistant",
      content: "Reading both.",
      extra_content: google(SIG_TEXT),
      tool_calls: [call("fc-1", "read", { path: "a" }, SIG_CALL), call("fc-2", "read", { path: "b" })],
    });
    expect(sent.lossy).toEqual([]);
  });

  test("Vertex AI's under `vertex`; another provider's never, the first call then skipped as Google documents", () => {
    const vertex = coreToOpenAIRequest(request([user, answered("vertex-chat"), results]), {
      reasoning: "think-tags",
      compat: PRESETS["vertex-openai"]!,
      provider: "vertex-chat",
    });
    expect(vertex.value.messages[1]!.tool_calls![0]!.extra_content).toEqual({
      vertex: { thought_signature: SIG_CALL },
    });
    expect(vertex.value.messages[1]!.extra_content).toEqual({ vertex: { thought_signature: SIG_TEXT } });
    const foreign = coreToOpenAIRequest(request([user, answered(PROVIDER), results]), {
      reasoning: "think-tags",
      compat: PRESETS["vertex-openai"]!,
      provider: "vertex-chat",
    });
    const assistant = foreign.value.messages[1]!;
    expect(JSON.stringify(assistant)).not.toContain(SIG_CALL);
    expect(JSON.stringify(assistant)).not.toContain(SIG_TEXT);
    expect(assistant.tool_calls![0]!.extra_content).toEqual({ vertex: { thought_signature: SKIP_SIGNATURE } });
    expect(assistant.tool_calls![1]!.extra_content).toBeUndefined();
    expect(foreign.lossy.map((entry) => entry.code)).toEqual([
      "thought-signature-dropped",
      "thought-signature-dropped",
      "thought-signature-skipped",
    ]);
  });

  test("a server without a preset for them gets none but its own", () => {
    const generic = coreToOpenAIRequest(request([user, answered(PROVIDER), results]), {
      reasoning: "think-tags",
      compat: PRESETS.generic!,
      provider: "local",
    });
    expect(JSON.stringify(generic.value)).not.toContain("extra_content");
    expect(generic.lossy.map((entry) => entry.code)).toContain("thought-signature-dropped");
    const own = coreToOpenAIRequest(request([user, answered("local"), results]), {
      reasoning: "think-tags",
      compat: PRESETS.generic!,
      provider: "local",
    });
    expect(own.value.messages[1]!.tool_calls![0]!.extra_content).toEqual(google(SIG_CALL));
  });

  test("a Chat client gets Parley's envelopes where Google puts signatures, and its history brings them back", () => {
    const answer = {
      ...accumulate(
        decode(
          streamOf({ text: "Reading.", textSigned: true, calls: [{ a: 1 }, { b: 2 }], signatureWithText: true }, []),
        ),
      ),
    };
    const client = coreToOpenAIResponse(answer).value.choices[0]!.message;
    const envelope = (value: unknown) =>
      decodeOriginSignature((value as { google: { thought_signature: string } }).google.thought_signature);
    expect(envelope(client.tool_calls![0]!.extra_content)).toMatchObject({
      provider: PROVIDER,
      sealed: SIG_CALL,
      id: "fc-0",
    });
    expect(client.tool_calls![1]!.extra_content).toBeUndefined();
    expect(envelope(client.extra_content)).toMatchObject({ provider: PROVIDER, sealed: SIG_TEXT });
    // The client sends the message back as it got it: the same parts, and Google's bytes to their maker.
    const read = openaiMessagesToCore([{ role: "user", content: "Go." }, client]).messages[1]!;
    expect(shape(read.parts)).toEqual(shape(answer.message.parts));
    const sent = coreToOpenAIRequest(request([read]), {
      reasoning: "think-tags",
      compat: PRESETS["gemini-openai"]!,
      provider: PROVIDER,
    });
    expect(sent.value.messages[0]!.tool_calls![0]!.extra_content).toEqual(google(SIG_CALL));
    expect(sent.value.messages[0]!.extra_content).toEqual(google(SIG_TEXT));
  });

  test("streamed to a Chat client: on the call's first delta, the text's first, or a delta of its own", () => {
    for (const signatureWithText of [true, false]) {
      const events = decode(streamOf({ text: "Hi.", textSigned: true, calls: [{ a: 1 }], signatureWithText }, []));
      const encoder = createOpenAIStreamEncoder({ model: "gemini" });
      const chunks = new SseDecoder()
        .push(events.map((event) => encoder.encode(event)).join(""))
        .map((message) => JSON.parse(message.data));
      const deltas = chunks.map((chunk) => chunk.choices[0]?.delta ?? {});
      const callDelta = deltas.find((delta) => delta.tool_calls?.[0]?.id === "fc-0");
      expect(decodeOriginSignature(callDelta.tool_calls[0].extra_content.google.thought_signature)).toMatchObject({
        sealed: SIG_CALL,
      });
      const signed = deltas.filter((delta) => delta.extra_content !== undefined);
      expect(signed).toHaveLength(1);
      expect(decodeOriginSignature(signed[0].extra_content.google.thought_signature)).toMatchObject({
        sealed: SIG_TEXT,
      });
      expect(signed[0].content).toBe(signatureWithText ? "Hi." : undefined);
      // no empty `<think>` or reasoning for a signature
      expect(JSON.stringify(deltas)).not.toContain("reasoning_content");
    }
  });

  test("a client's own signature (not Parley's) comes back as of unknown maker, on its call", () => {
    const read = openaiMessagesToCore([
      { role: "user", content: "Go." },
      { role: "assistant", content: null, tool_calls: [call("fc-1", "read", {}, "raw-google-bytes")] },
    ]).messages[1]!;
    expect(shape(read.parts)).toEqual([
      ["signature", "raw-google-bytes", "fc-1", undefined],
      ["call", "fc-1", "read", {}],
    ]);
    expect(read.parts[1]).toEqual({ type: "tool_call", id: "fc-1", name: "read", input: {} });
  });
});

describe("the inspector's view", () => {
  test("a signature is shown sealed, at the `extra_content` it came in", () => {
    const view = openaiChatView.request({
      model: "gemini-3-pro-preview",
      messages: [
        { role: "user", content: "Go." },
        {
          role: "assistant",
          content: "Reading.",
          extra_content: google(SIG_TEXT),
          tool_calls: [call("fc-1", "read", {}, SIG_CALL)],
        },
      ],
    });
    const parts = view!.messages[1]!.parts.map((viewed) => [
      viewed.path,
      viewed.part.type,
      (viewed.part as { signature?: string }).signature,
    ]);
    expect(parts).toEqual([
      ["messages[1].extra_content", "thinking", `[sealed, ${SIG_TEXT.length} characters]`],
      ["messages[1].content", "text", undefined],
      ["messages[1].tool_calls[0].extra_content", "thinking", `[sealed, ${SIG_CALL.length} characters]`],
      ["messages[1].tool_calls[0]", "tool_call", undefined],
    ]);
  });
});

describe("presets from the URL", () => {
  test.each([
    ["https://generativelanguage.googleapis.com/v1beta/openai", "gemini-openai"],
    ["https://generativelanguage.googleapis.com/v1beta/openai/", "gemini-openai"],
    [
      "https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/openapi",
      "vertex-openai",
    ],
    ["https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/endpoints/openapi", "vertex-openai"],
    ["https://us-central1-aiplatform.googleapis.com/v1/projects/p/locations/us-central1/endpoints/1234", "generic"],
  ])("%s is %s", (url, preset) => {
    expect(detectPreset(url).id).toBe(preset);
  });

  test("Google's endpoints refuse `store`, `metadata` and `prompt_cache_key`: left out and reported", () => {
    const sent = coreToOpenAIRequest(
      {
        ...request([{ role: "user", parts: [{ type: "text", text: "hi" }] }]),
        extra: {
          openai: {
            store: true,
            metadata: { a: "b" },
            extra_body: { google: { thinking_config: { include_thoughts: true } } },
          },
        },
      },
      { reasoning: "think-tags", compat: PRESETS["gemini-openai"]!, provider: PROVIDER },
    );
    expect(sent.value.store).toBeUndefined();
    expect(sent.value.metadata).toBeUndefined();
    expect(sent.value.extra_body).toEqual({ google: { thinking_config: { include_thoughts: true } } });
    expect(sent.lossy.map((entry) => entry.code)).toEqual(["field-dropped-store", "field-dropped-metadata"]);
  });
});
