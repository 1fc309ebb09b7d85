import { SKIP } from "./gemini-server.js";
import { openaiFrames, type RecordedRequest, type ScriptedReply, type ScriptedUpstream } from "./scripted-upstream.js";
import { type StrictServer, type UnknownField, unknownFields } from "./strict-servers.js";

/**
 * A scripted Google OpenAI-compatible endpoint: the Gemini API's (`generativelanguage.googleapis.com/v1beta/openai`,
 * thought signatures under `extra_content.google`) or Vertex AI's (`.../endpoints/openapi`, under
 * `extra_content.vertex`), answering as Gemini 3 does there:
 *
 * - a call's signature in `tool_calls[i].extra_content.<key>.thought_signature`, on the first of parallel calls only;
 *   a text's on the message (`message.extra_content`), in a stream on a last delta with no content, only
 *   `extra_content` (and the role Google repeats on every delta);
 * - in a stream, each call whole in one delta, without `index`;
 *
 * and refusing, before any scripted reply is used, what Google's endpoint refuses, in its words and its shape: an
 * array holding one error object, `[{"error":{"code":400,"message":...,"status":"INVALID_ARGUMENT"}}]`, as the
 * Gemini API's OpenAI endpoint answers (manthanabc/paws#103 and Routstr/routstr-core#505 quote it whole; the same shape
 * is assumed for Vertex AI's):
 *
 * - a key other than the one it was given (`Authorization: Bearer`);
 * - a field it does not know (`Invalid JSON payload received. Unknown name "store": Cannot find field.`;
 *   `store`, `metadata` and `prompt_cache_key` are reported refused by users of the OpenAI SDKs);
 * - a current turn's first call without its signature, in the Gemini API's words (`Function call is missing a
 *   thought_signature in functionCall parts...`, the issues above) or Vertex AI's (`Unable to submit request because
 *   function call ... is missing a thought_signature`, quoted in crazy-goat/nexos-provider's known bugs); and a
 *   signature it did not issue (`Corrupted thought signature.`): the two endpoints' signatures are not each other's.
 *
 * Google's skip value passes.
 */

export type SignatureKey = "google" | "vertex";

export interface GeminiChatServer {
  /** Which endpoint: where its signatures go, and whose words its refusals are in. */
  signatureKey: SignatureKey;
  /** The key it takes as `Authorization: Bearer`; undefined: any. */
  apiKey?: string;
  /** Answers each request that is not refused; none left: a 500. */
  replies: ScriptedReply[];
  /** Every signature it gave, which alone it takes back (beside the skip value). */
  issued: Set<string>;
  /** The requests it refused, with the message of each refusal. */
  refused: Array<{ request: RecordedRequest; message: string }>;
}

/** One answer: text, calls (in parallel), or both. */
export interface GeminiChatTurn {
  text?: string;
  calls?: Array<{ name: string; args: Record<string, unknown> }>;
}

export function geminiChatServer(signatureKey: SignatureKey, apiKey?: string): GeminiChatServer {
  return { signatureKey, ...(apiKey === undefined ? {} : { apiKey }), replies: [], issued: new Set(), refused: [] };
}

/** Makes `upstream` (a scripted upstream of kind `openai`) behave as Google's endpoint. */
export function actAsGeminiChat(upstream: ScriptedUpstream, server: GeminiChatServer): void {
  upstream.fallback = (request) => {
    const refused = refusal(request, server);
    if (refused === undefined) return server.replies.shift() ?? noReply();
    const body = (refused as { body?: Array<{ error?: { message?: string } }> }).body;
    server.refused.push({ request, message: body?.[0]?.error?.message ?? "" });
    return refused;
  };
}

/**
 * Answers with `turns[n]` the request whose history holds `n` assistant messages (its `stream` read from the body),
 * each refusal first.
 */
export function playTurns(
  upstream: ScriptedUpstream,
  server: GeminiChatServer,
  turns: readonly GeminiChatTurn[],
): void {
  actAsGeminiChat(upstream, server);
  const refuseOrReply = upstream.fallback!;
  upstream.fallback = (request) => {
    const body = request.body as { messages?: Array<{ role?: string }>; stream?: boolean } | undefined;
    const index = Math.min(
      (body?.messages ?? []).filter((message) => message.role === "assistant").length,
      turns.length - 1,
    );
    const turn = turns[index]!;
    server.replies = [
      body?.stream === true
        ? { kind: "sse", frames: geminiChatFrames(server, turn, index) }
        : { kind: "json", body: geminiChatAnswer(server, turn, index) },
    ];
    return refuseOrReply(request);
  };
}

/** The signature the server gives a turn's call (`call`: its place) or text, base64 as Google's are. */
export function chatSignature(server: GeminiChatServer, turn: number, call?: number): string {
  const prefix = server.signatureKey === "google" ? "CiQBgsig" : "CiQBvsig";
  const signature = `${prefix}+turn${turn}/${call === undefined ? "text" : `call${call}`}==`;
  server.issued.add(signature);
  return signature;
}

/** A call's id as the server gives it. */
export const chatCallId = (turn: number, call: number) => `function-call-${turn}-${call}`;

/** The whole answer (`stream: false`). */
export function geminiChatAnswer(server: GeminiChatServer, turn: GeminiChatTurn, index: number) {
  const calls = turn.calls ?? [];
  const message: Record<string, unknown> = { role: "assistant", content: turn.text ?? null };
  if (calls.length > 0) message.tool_calls = calls.map((call, position) => toolCall(server, call, index, position));
  else if (turn.text !== undefined) message.extra_content = signed(server, chatSignature(server, index));
  return {
    id: `chatcmpl-g${index}`,
    object: "chat.completion",
    created: 1_764_000_000 + index,
    model: "gemini-3-pro-preview",
    choices: [{ index: 0, message, finish_reason: calls.length > 0 ? "tool_calls" : "stop" }],
    usage: usage(index),
  };
}

/**
 * The streamed answer: the text in two pieces, each call whole in a delta of its own without `index`, and a text's
 * signature on a last delta with no content, only `extra_content` (or, `signatureWithText`, on the text's first delta).
 */
export function geminiChatFrames(
  server: GeminiChatServer,
  turn: GeminiChatTurn,
  index: number,
  options: { signatureWithText?: boolean } = {},
): string[] {
  const chunk = (delta: Record<string, unknown>, finish?: string) => ({
    choices: [{ delta, index: 0, ...(finish === undefined ? {} : { finish_reason: finish }) }],
    created: 1_764_000_000 + index,
    id: `chatcmpl-g${index}`,
    model: "gemini-3-pro-preview",
    object: "chat.completion.chunk",
    ...(finish === undefined ? {} : { usage: usage(index) }),
  });
  const calls = turn.calls ?? [];
  const textSignature =
    calls.length === 0 && turn.text !== undefined ? signed(server, chatSignature(server, index)) : undefined;
  const chunks: unknown[] = [];
  if (turn.text !== undefined) {
    const half = Math.ceil(turn.text.length / 2);
    const first: Record<string, unknown> = { role: "assistant", content: turn.text.slice(0, half) };
    if (options.signatureWithText && textSignature !== undefined) first.extra_content = textSignature;
    chunks.push(chunk(first));
    if (turn.text.length > half) chunks.push(chunk({ content: turn.text.slice(half) }));
  }
  calls.forEach((call, position) => {
    chunks.push(chunk({ role: "assistant", tool_calls: [toolCall(server, call, index, position)] }));
  });
  if (textSignature !== undefined && !options.signatureWithText)
    chunks.push(chunk({ role: "assistant", extra_content: textSignature }));
  chunks.push(chunk({}, calls.length > 0 ? "tool_calls" : "stop"));
  return openaiFrames(chunks);
}

function toolCall(server: GeminiChatServer, call: { name: string; args: unknown }, turn: number, position: number) {
  return {
    ...(position === 0 ? { extra_content: signed(server, chatSignature(server, turn, position)) } : {}),
    function: { arguments: JSON.stringify(call.args), name: call.name },
    id: chatCallId(turn, position),
    type: "function",
  };
}

const signed = (server: GeminiChatServer, signature: string) => ({
  [server.signatureKey]: { thought_signature: signature },
});

const usage = (index: number) => ({ completion_tokens: 20, prompt_tokens: 100 + index, total_tokens: 120 + index });

/** Google's error, as its OpenAI endpoint sends it: in an array. */
export function googleChatError(code: number, status: string, message: string): unknown {
  return [{ error: { code, message, status } }];
}

function invalid(message: string): ScriptedReply {
  return { kind: "error", status: 400, body: googleChatError(400, "INVALID_ARGUMENT", message) };
}

function noReply(): ScriptedReply {
  return {
    kind: "error",
    status: 500,
    body: googleChatError(500, "INTERNAL", "scripted Gemini OpenAI endpoint: no reply queued"),
  };
}

/** What the endpoint takes, beside which it answers 400: Chat Completions less what it refuses, and its own. */
export const GOOGLE_CHAT_SERVER: StrictServer = {
  name: "Google's OpenAI-compatible endpoint",
  request: new Set([
    "model",
    "messages",
    "max_tokens",
    "max_completion_tokens",
    "temperature",
    "top_p",
    "n",
    "stop",
    "stream",
    "stream_options",
    "tools",
    "tool_choice",
    "parallel_tool_calls",
    "response_format",
    "reasoning_effort",
    "seed",
    "presence_penalty",
    "frequency_penalty",
    "user",
    "extra_body",
  ]),
  // Chat Completions' message fields, and Google's own; no reasoning field (Gemini's thoughts stay behind its signatures)
  message: new Set([
    "role",
    "content",
    "name",
    "audio",
    "function_call",
    "refusal",
    "tool_calls",
    "tool_call_id",
    "extra_content",
  ]),
  refuse: (unknown: readonly UnknownField[]) => {
    const messages = unknown.map((field) => {
      const at = field.loc.length === 1 ? "" : ` at '${field.loc[0]}[${field.loc[1]}]'`;
      return `Invalid JSON payload received. Unknown name "${field.loc.at(-1)}"${at}: Cannot find field.`;
    });
    return invalid(messages.join("\n"));
  },
};

function refusal(request: RecordedRequest, server: GeminiChatServer): ScriptedReply | undefined {
  if (server.apiKey !== undefined && request.headers.authorization !== `Bearer ${server.apiKey}`)
    return invalid("API key not valid. Please pass a valid API key.");
  const body = request.body as { messages?: unknown } | undefined;
  if (body === null || typeof body !== "object" || !Array.isArray(body.messages))
    return invalid("Invalid JSON payload received.");
  const unknown = unknownFields(GOOGLE_CHAT_SERVER, body);
  if (unknown.length > 0) return GOOGLE_CHAT_SERVER.refuse(unknown);
  return signatures(body.messages as Array<Record<string, unknown>>, server);
}

/**
 * The current turn starts at the last user message holding text; each of its assistant messages with calls must sign
 * its first call (Gemini 3). Every signature under the endpoint's key must be one it issued, or the skip value.
 */
function signatures(messages: Array<Record<string, unknown>>, server: GeminiChatServer): ScriptedReply | undefined {
  const key = server.signatureKey;
  const signatureOf = (object: unknown): unknown =>
    (object as { extra_content?: Record<string, { thought_signature?: unknown }> } | null)?.extra_content?.[key]
      ?.thought_signature;
  let start = 0;
  messages.forEach((message, index) => {
    if (message.role === "user") start = index;
  });
  // Google's `contents`: system messages go to the system instruction, a run of tool messages is one content.
  let position = 0;
  let previous: unknown;
  for (const [index, message] of messages.entries()) {
    if (message.role === "system" || message.role === "developer") continue;
    if (!(message.role === "tool" && previous === "tool")) position++;
    previous = message.role;
    const calls = Array.isArray(message.tool_calls) ? (message.tool_calls as Array<Record<string, unknown>>) : [];
    for (const signature of [signatureOf(message), ...calls.map(signatureOf)]) {
      if (signature === undefined || signature === SKIP) continue;
      if (typeof signature !== "string" || !server.issued.has(signature))
        return invalid("Corrupted thought signature.");
    }
    const first = calls[0];
    if (message.role !== "assistant" || index < start || first === undefined || signatureOf(first) !== undefined)
      continue;
    const name = (first.function as { name?: string } | undefined)?.name;
    return invalid(
      key === "google"
        ? `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`default_api:${name}\` , position ${position}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`
        : `Unable to submit request because function call \`${name}\` in the ${position}. content block is missing a \`thought_signature\`. Learn more: https://docs.cloud.google.com/vertex-ai/generative-ai/docs/thought-signatures`,
    );
  }
  return undefined;
}
