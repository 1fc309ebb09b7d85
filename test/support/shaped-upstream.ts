import { encode } from "gpt-tokenizer/encoding/o200k_base";
import {
  openaiFrames,
  type RecordedRequest,
  type ScriptedReply,
  type ScriptedUpstream,
  startScriptedUpstream,
} from "./scripted-upstream.js";
import type { ServerShape, ShapedModel } from "./server-shapes.js";
import { strictServerFor } from "./strict-servers.js";

/**
 * A scripted OpenAI-compatible server that behaves as `shape` says: its model list and info endpoints, its checks
 * (unknown model, limits) with its own error bodies, and answers with reasoning in its own field. A request that
 * carries a Bash tool and asks to run `echo parley-recipe` gets that tool call; the tool's result gets a sentence
 * quoting it; anything else gets "Hello from <model>.".
 */

export interface ShapedUpstream extends ScriptedUpstream {
  shape: ServerShape;
  /** Requests the server refused, with the error it sent. */
  refused: Array<{ request: RecordedRequest; status: number; body: unknown }>;
}

type ChatBody = {
  model?: string;
  stream?: boolean;
  max_tokens?: number;
  max_completion_tokens?: number;
  messages?: Array<{ role: string; content?: unknown; tool_calls?: unknown }>;
  tools?: Array<{ function?: { name?: string } }>;
};

export async function startShapedUpstream(shape: ServerShape): Promise<ShapedUpstream> {
  const upstream = (await startScriptedUpstream("openai")) as ShapedUpstream;
  upstream.shape = shape;
  // refuses the fields the server it stands for does not know
  upstream.server = strictServerFor("openai", shape.name);
  upstream.refused = [];
  upstream.otherRoutes = (request) => {
    const path = request.path.split("?")[0]!;
    if (request.method === "GET" && path === "/v1/models") {
      const listed = shape.modelList();
      return listed === undefined
        ? { kind: "error", status: 404, body: "404 page not found", headers: { "content-type": "text/plain" } }
        : { kind: "json", body: listed };
    }
    if (request.method === "POST" && path === "/tokenize" && shape.tokenize !== undefined) {
      const reply = shape.tokenize(request.body);
      return reply.status === 200
        ? { kind: "json", body: reply.body }
        : { kind: "error", status: reply.status, body: reply.body };
    }
    const info = shape.info?.(request.method, path, request.body);
    return info === undefined ? undefined : { kind: "json", body: info };
  };
  upstream.fallback = (request) => {
    const reply = answer(shape, request);
    if (reply.kind === "error") upstream.refused.push({ request, status: reply.status, body: reply.body });
    return reply;
  };
  return upstream;
}

function answer(shape: ServerShape, request: RecordedRequest): ScriptedReply {
  const body = request.body as ChatBody;
  const model =
    shape.models.find((candidate) => candidate.id === body.model) ?? (shape.checksModel ? undefined : shape.models[0]);
  if (model === undefined) {
    const refusal = shape.unknownModel(String(body.model));
    return { kind: "error", status: refusal.status, body: refusal.body };
  }
  const prompt = promptTokens(body);
  const over = shape.overLimit(model, body.max_tokens ?? body.max_completion_tokens, prompt);
  if (over !== undefined) return { kind: "error", status: over.status, body: over.body };
  return reply(shape, model, body, prompt);
}

/** The prompt as a server's tokenizer sees it, roughly: every text, argument and tool schema, plus framing. */
export function promptTokens(body: ChatBody): number {
  const texts: string[] = [];
  for (const message of body.messages ?? []) {
    texts.push(message.role);
    texts.push(typeof message.content === "string" ? message.content : JSON.stringify(message.content ?? ""));
    if (message.tool_calls !== undefined) texts.push(JSON.stringify(message.tool_calls));
  }
  if (body.tools !== undefined) texts.push(JSON.stringify(body.tools));
  return encode(texts.join("\n")).length + 4 * (body.messages?.length ?? 0) + 3;
}

function reply(shape: ServerShape, model: ShapedModel, body: ChatBody, prompt: number): ScriptedReply {
  const messages = body.messages ?? [];
  const toolResult = messages.find((message) => message.role === "tool");
  const asksForTool =
    toolResult === undefined &&
    (body.tools ?? []).some((tool) => tool.function?.name === "Bash") &&
    messages.some(
      (message) => message.role === "user" && JSON.stringify(message.content).includes("echo parley-recipe"),
    );
  const thinking = asksForTool ? "The user wants a shell command run." : "The user greets me.";
  const text =
    toolResult !== undefined
      ? `The command printed ${String(toolResult.content).trim()}.`
      : asksForTool
        ? ""
        : `Hello from ${model.id}.`;
  const head = {
    id: `chatcmpl-${shape.name}`,
    object: "chat.completion.chunk",
    created: 1_767_225_600,
    model: model.id,
  };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) => ({
    ...head,
    choices: [{ index: 0, delta, finish_reason: finish }],
    ...(usage === undefined ? {} : { usage }),
  });
  const usage = { prompt_tokens: prompt, completion_tokens: 12, total_tokens: prompt + 12 };
  const call = {
    index: 0,
    id: `call_${shape.name}_1`,
    type: "function",
    function: { name: "Bash", arguments: '{"command":"echo parley-recipe"}' },
  };
  const reasoningDelta = reasoningFields(shape, thinking);
  const contentPrefix = shape.reasoning === "think-tags" ? `<think>${thinking}</think>\n\n` : "";
  if (body.stream === true) {
    const chunks = [chunk({ role: "assistant", content: "" })];
    if (shape.reasoning !== "think-tags") chunks.push(chunk(reasoningDelta));
    if (contentPrefix + text !== "") chunks.push(chunk({ content: contentPrefix + text }));
    if (asksForTool) chunks.push(chunk({ tool_calls: [call] }));
    chunks.push(chunk({}, asksForTool ? "tool_calls" : "stop", usage));
    return { kind: "sse", frames: openaiFrames(chunks) };
  }
  const message: Record<string, unknown> = {
    role: "assistant",
    content: contentPrefix + text,
    ...(shape.reasoning === "think-tags" ? {} : reasoningDelta),
  };
  if (asksForTool) message.tool_calls = [{ id: call.id, type: call.type, function: call.function }];
  return {
    kind: "json",
    body: {
      id: `chatcmpl-${shape.name}`,
      object: "chat.completion",
      created: 1_767_225_600,
      model: model.id,
      choices: [{ index: 0, message, finish_reason: asksForTool ? "tool_calls" : "stop" }],
      usage,
    },
  };
}

function reasoningFields(shape: ServerShape, thinking: string): Record<string, unknown> {
  switch (shape.reasoning) {
    case "reasoning":
      return { reasoning: thinking };
    case "reasoning_content":
      return { reasoning_content: thinking };
    case "reasoning_details":
      return {
        reasoning: thinking,
        reasoning_details: [{ type: "reasoning.text", text: thinking, format: "unknown", index: 0 }],
      };
    case "think-tags":
      return {};
    default: {
      const never: never = shape.reasoning;
      throw new Error(`unknown reasoning field ${String(never)}`);
    }
  }
}
