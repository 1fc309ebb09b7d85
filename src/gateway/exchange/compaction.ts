import {
  assertNever,
  type ConversationRequest,
  type ConversationResponse,
  encodeCompaction,
  type Part,
  type StreamEvent,
  UpstreamError,
} from "../../core/index.js";
import type { FormatAdapter } from "../../formats/adapter.js";
import type { ProviderRuntime } from "./providers.js";

/**
 * Compaction on any upstream. A client that asks for its conversation compacted (`ConversationRequest.compact`:
 * Codex's `compaction_trigger`, `POST /v1/responses/compact`) gets it compacted by a provider whose API does that
 * itself (the request goes on as it came); for any other, Parley asks the routed model for a summary of the
 * conversation, through the same exchange, and answers with the one part the client's API holds a compacted
 * conversation in, whose envelope carries the summary and where it was made. A later request replays that part as
 * the summary's text (the client's reader does), so the provider never sees the envelope.
 */
export interface CompactionPlan {
  /** The answer's one part around the summary the model wrote. */
  answerPart(summary: string): Part;
}

/** What the model is asked, after the conversation, when Parley compacts it. */
export const SUMMARY_QUESTION = [
  "The conversation above will be replaced by a summary, which is all you will see of it when the work goes on.",
  "Write that summary now, for yourself: the user's goals and instructions, what has been done and decided,",
  "the state of files, commands and results that matter, open problems, and the next steps.",
  "Be complete but brief; quote exact names, paths and values. Do not call any tool and do not continue the task:",
  "answer with the summary alone.",
].join(" ");

/**
 * Whether Parley compacts this request itself, and how its answer is written: the client asked for compaction, its
 * API has a part to hold it, and the provider's API does not compact on its own.
 */
export function compactionPlan(
  client: FormatAdapter,
  core: ConversationRequest,
  provider: ProviderRuntime,
  upstreamModel: string,
): CompactionPlan | undefined {
  const holder = client.client.compaction;
  if (core.compact !== true || holder === undefined || providerCompacts(provider)) return undefined;
  const origin = { format: provider.adapter.id, provider: provider.config.name, model: upstreamModel };
  return { answerPart: (summary) => holder.answerPart(encodeCompaction({ summary, origin })) };
}

/** Whether the provider compacts a conversation itself: its API's providers do, and it was not configured not to. */
export function providerCompacts(provider: ProviderRuntime): boolean {
  return provider.adapter.upstream.compacts === true && provider.connection.compacts !== false;
}

/**
 * The request that asks for the summary: the whole conversation, then the question as a user message. The tools
 * stay offered (a history with tool calls needs them, on Anthropic's API) but none may be called.
 */
export function summaryRequest(core: ConversationRequest): ConversationRequest {
  const { compact: _compact, ...request } = core;
  const summary: ConversationRequest = {
    ...request,
    messages: [...core.messages, { role: "user", parts: [{ type: "text", text: SUMMARY_QUESTION }] }],
  };
  if ((core.tools?.length ?? 0) > 0) summary.toolChoice = { type: "none" };
  else delete summary.toolChoice;
  // A structured-output setting would shape the summary; the client asked for none for it.
  delete summary.responseFormat;
  return summary;
}

/** The model's whole answer as the compacted conversation: one part, the summary inside it. */
export function compactedAnswer(answer: ConversationResponse, plan: CompactionPlan): ConversationResponse {
  const summary = answerText(answer.message.parts);
  if (summary.trim() === "") throw noSummary();
  return {
    ...answer,
    message: { role: "assistant", parts: [plan.answerPart(summary)] },
    stopReason: { unified: "end_turn", raw: answer.stopReason.raw },
  };
}

/**
 * The model's streamed answer as the compacted conversation: its blocks are held and read, and at its finish the one
 * part goes out whole. The stream's start, its errors and its usage pass as they come (the status line waits for the
 * finish or the hold time, then pings keep the client waiting).
 */
export async function* compactedEvents(
  upstream: AsyncIterator<StreamEvent[]>,
  plan: CompactionPlan,
): AsyncGenerator<StreamEvent[]> {
  let summary = "";
  try {
    for (;;) {
      const next = await upstream.next();
      if (next.done) return;
      const out: StreamEvent[] = [];
      for (const event of next.value) {
        switch (event.type) {
          case "block-start":
            if (event.part.type === "text") summary += event.part.text;
            break;
          case "text-delta":
            summary += event.text;
            break;
          case "finish":
            if (summary.trim() === "") {
              out.push({ type: "error", error: { type: "api_error", message: noSummary().message, status: 502 } });
              break;
            }
            out.push(
              { type: "block-start", index: 0, part: plan.answerPart(summary) },
              { type: "block-end", index: 0 },
              { ...event, stopReason: { unified: "end_turn", raw: event.stopReason.raw } },
            );
            break;
          case "message-start":
          case "error":
            out.push(event);
            break;
          case "thinking-delta":
          case "signature":
          case "tool-input-delta":
          case "opaque-delta":
          case "block-end":
            break;
          default:
            assertNever(event, "stream event");
        }
      }
      if (out.length > 0) yield out;
    }
  } finally {
    await upstream.return?.();
  }
}

function answerText(parts: readonly Part[]): string {
  return parts.map((part) => (part.type === "text" ? part.text : "")).join("");
}

function noSummary(): UpstreamError {
  return new UpstreamError("api_error", "the model answered the request to compact the conversation with no summary", {
    retryable: false,
    status: 502,
  });
}
