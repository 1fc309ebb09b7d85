import { geminiFrames } from "./gemini-server.js";
import { anthropicFrames, openaiFrames, type RecordedRequest, type UpstreamKind } from "./scripted-upstream.js";

/**
 * One agent turn written as each API's streamed answer: the model thinks, then calls one tool or answers in text.
 * Each API's reasoning comes the way its real servers send it, so that a test can check it reaches its maker again:
 * DeepSeek-style `reasoning_content` on Chat, a signed thinking block on Anthropic, a reasoning item with
 * `encrypted_content` on Responses, a thought part and a `thoughtSignature` on the part it belongs to on Gemini.
 */

type Json = Record<string, unknown>;

export interface ScriptedTurn {
  thought: string;
  /** The tool the turn calls; without one, the turn answers `text`. */
  call?: { name: string; args: Json };
  text?: string;
}

/** What each API's maker gets back for turn `index`: the marks the scripts below put on it. */
export const turnMarks = {
  callId: (index: number) => `call_turn_${index}`,
  anthropicSignature: (index: number) => `EqScriptedSignature${index}==`,
  encryptedContent: (index: number) => `gAAAAB-scripted-sealed-reasoning-${index}==`,
  geminiSignature: (index: number) => `gsig_scripted_turn_${index}`,
};

/**
 * How a server of the API words its answer, where servers of one API differ; by default DeepSeek-style
 * `reasoning_content` on Chat and usage of `100 + index` prompt tokens (nothing from a cache).
 */
export interface AnswerShape {
  /** The answer's usage object, in the API's own shape, in place of the default (a caching server's counts). */
  usage?: Json;
  /** Chat: the field reasoning streams in (vLLM's `reasoning`), or none (api.openai.com sends no reasoning text). */
  reasoningField?: "reasoning_content" | "reasoning" | "none";
}

/** The streamed answer for `turn` (the `index`-th of the conversation) in the API of `kind`. */
export function turnFrames(kind: UpstreamKind, turn: ScriptedTurn, index: number, shape: AnswerShape = {}): string[] {
  switch (kind) {
    case "openai":
      return chatFrames(turn, index, shape);
    case "anthropic":
      return anthropicTurnFrames(turn, index, shape);
    case "openai-responses":
      return responsesFrames(turn, index, shape);
    case "gemini":
      return geminiFrames(geminiAnswer(turn, index));
  }
}

/** How many tool results a request to an upstream of any API carries: the turn the conversation is at. */
export function toolResultCount(request: RecordedRequest): number {
  let count = 0;
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) {
      for (const item of value) visit(item);
      return;
    }
    if (value === null || typeof value !== "object") return;
    const record = value as Json;
    if (
      record.role === "tool" ||
      record.type === "tool_result" ||
      record.type === "function_call_output" ||
      record.functionResponse !== undefined
    )
      count++;
    for (const inner of Object.values(record)) visit(inner);
  };
  const body = request.body as Json | undefined;
  visit(body?.messages ?? body?.input ?? body?.contents);
  return count;
}

function chatFrames(turn: ScriptedTurn, index: number, shape: AnswerShape): string[] {
  const chunk = (delta: Json, finish: string | null = null) => ({
    id: `chatcmpl-turn-${index}`,
    object: "chat.completion.chunk",
    created: 1,
    model: "scripted-model",
    choices: [{ index: 0, delta, finish_reason: finish }],
  });
  const half = Math.floor(turn.thought.length / 2);
  const answer =
    turn.call === undefined
      ? [chunk({ content: turn.text ?? "" }), chunk({}, "stop")]
      : [
          chunk({
            tool_calls: [
              {
                index: 0,
                id: turnMarks.callId(index),
                type: "function",
                function: { name: turn.call.name, arguments: "" },
              },
            ],
          }),
          chunk({ tool_calls: [{ index: 0, function: { arguments: JSON.stringify(turn.call.args) } }] }),
          chunk({}, "tool_calls"),
        ];
  const field = shape.reasoningField ?? "reasoning_content";
  const reasoning =
    field === "none"
      ? [chunk({ role: "assistant", content: null })]
      : [
          chunk({ role: "assistant", content: null, [field]: turn.thought.slice(0, half) }),
          chunk({ [field]: turn.thought.slice(half) }),
        ];
  return openaiFrames([
    ...reasoning,
    ...answer,
    {
      ...chunk({}),
      choices: [],
      usage: shape.usage ?? { prompt_tokens: 100 + index, completion_tokens: 20, total_tokens: 120 },
    },
  ]);
}

function anthropicTurnFrames(turn: ScriptedTurn, index: number, shape: AnswerShape): string[] {
  const events: Array<{ type: string } & Json> = [
    {
      type: "message_start",
      message: {
        id: `msg_turn_${index}`,
        type: "message",
        role: "assistant",
        model: "scripted-model",
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...(shape.usage ?? { input_tokens: 100 + index }), output_tokens: 1 },
      },
    },
    { type: "content_block_start", index: 0, content_block: { type: "thinking", thinking: "", signature: "" } },
    { type: "content_block_delta", index: 0, delta: { type: "thinking_delta", thinking: turn.thought } },
    {
      type: "content_block_delta",
      index: 0,
      delta: { type: "signature_delta", signature: turnMarks.anthropicSignature(index) },
    },
    { type: "content_block_stop", index: 0 },
  ];
  if (turn.call === undefined) {
    events.push(
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: turn.text ?? "" } },
      { type: "content_block_stop", index: 1 },
    );
  } else {
    events.push(
      {
        type: "content_block_start",
        index: 1,
        content_block: { type: "tool_use", id: `toolu_turn_${index}`, name: turn.call.name, input: {} },
      },
      {
        type: "content_block_delta",
        index: 1,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(turn.call.args) },
      },
      { type: "content_block_stop", index: 1 },
    );
  }
  events.push(
    {
      type: "message_delta",
      delta: { stop_reason: turn.call === undefined ? "end_turn" : "tool_use", stop_sequence: null },
      usage: { output_tokens: 20 },
    },
    { type: "message_stop" },
  );
  return anthropicFrames(events);
}

/** A Responses stream as OpenAI sends it: the reasoning item, then the call or the message, each added and done. */
function responsesFrames(turn: ScriptedTurn, index: number, shape: AnswerShape): string[] {
  const reasoning = {
    id: `rs_turn_${index}`,
    type: "reasoning",
    summary: [{ type: "summary_text", text: turn.thought }],
    encrypted_content: turnMarks.encryptedContent(index),
  };
  const second =
    turn.call === undefined
      ? {
          id: `msg_turn_${index}`,
          type: "message",
          status: "completed",
          role: "assistant",
          content: [{ type: "output_text", text: turn.text ?? "", annotations: [] }],
        }
      : {
          id: `fc_turn_${index}`,
          type: "function_call",
          status: "completed",
          call_id: turnMarks.callId(index),
          name: turn.call.name,
          arguments: JSON.stringify(turn.call.args),
        };
  const response = (status: string, output: Json[]) => ({
    id: `resp_turn_${index}`,
    object: "response",
    created_at: 1,
    status,
    model: "scripted-model",
    output,
    usage:
      status === "completed"
        ? (shape.usage ?? { input_tokens: 100 + index, output_tokens: 20, total_tokens: 120 })
        : null,
  });
  const events: Json[] = [{ type: "response.created", response: response("in_progress", []) }];
  const summary = reasoning.summary[0]!;
  const at = (item: Json, output_index: number) => ({ item_id: item.id, output_index });
  events.push(
    { type: "response.output_item.added", output_index: 0, item: { ...reasoning, summary: [] } },
    {
      type: "response.reasoning_summary_part.added",
      ...at(reasoning, 0),
      summary_index: 0,
      part: { type: "summary_text", text: "" },
    },
    { type: "response.reasoning_summary_text.delta", ...at(reasoning, 0), summary_index: 0, delta: summary.text },
    { type: "response.reasoning_summary_text.done", ...at(reasoning, 0), summary_index: 0, text: summary.text },
    { type: "response.reasoning_summary_part.done", ...at(reasoning, 0), summary_index: 0, part: summary },
    { type: "response.output_item.done", output_index: 0, item: reasoning },
  );
  if (second.type === "function_call") {
    const call = second as Json & { arguments: string };
    events.push(
      { type: "response.output_item.added", output_index: 1, item: { ...call, arguments: "", status: "in_progress" } },
      { type: "response.function_call_arguments.delta", ...at(call, 1), delta: call.arguments },
      { type: "response.function_call_arguments.done", ...at(call, 1), arguments: call.arguments },
    );
  } else {
    const message = second as Json & { content: Array<{ type: string; text: string; annotations: [] }> };
    const part = message.content[0]!;
    events.push(
      {
        type: "response.output_item.added",
        output_index: 1,
        item: { ...message, content: [], status: "in_progress" },
      },
      {
        type: "response.content_part.added",
        ...at(message, 1),
        content_index: 0,
        part: { ...part, text: "" },
      },
      { type: "response.output_text.delta", ...at(message, 1), content_index: 0, delta: part.text, logprobs: [] },
      { type: "response.output_text.done", ...at(message, 1), content_index: 0, text: part.text, logprobs: [] },
      { type: "response.content_part.done", ...at(message, 1), content_index: 0, part },
    );
  }
  events.push(
    { type: "response.output_item.done", output_index: 1, item: second },
    { type: "response.completed", response: response("completed", [reasoning, second]) },
  );
  return events.map(
    (event, sequence) =>
      `event: ${event.type as string}\ndata: ${JSON.stringify({ ...event, sequence_number: sequence })}\n\n`,
  );
}

/** Gemini 3's answer: a thought summary, then the call signed, or the text with its signature on its last part. */
export function geminiAnswer(turn: ScriptedTurn, index: number): Json {
  const signature = turnMarks.geminiSignature(index);
  const last =
    turn.call === undefined
      ? { text: turn.text ?? "", thoughtSignature: signature }
      : { functionCall: { name: turn.call.name, args: turn.call.args }, thoughtSignature: signature };
  return {
    candidates: [
      {
        content: { role: "model", parts: [{ text: turn.thought, thought: true }, last] },
        finishReason: "STOP",
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: 100 + index,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 10,
      totalTokenCount: 130 + index,
    },
    modelVersion: "gemini-3-pro-preview",
    responseId: `resp-turn-${index}`,
  };
}
