import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import type { Json, ResponsesItem } from "../../src/formats/openai-responses/wire-types.js";
import { parseSse } from "../../src/stream/sse.js";

/** Recorded Responses traffic in `test/fixtures/openai-responses` and Codex's requests in `test/fixtures/codex`. */
const FIXTURES = new URL("../fixtures/", import.meta.url);

export function fixtureText(file: string): string {
  return readFileSync(new URL(file, FIXTURES), "utf8");
}

export function fixtureJson<T = Json>(file: string): T {
  return JSON.parse(fixtureText(file)) as T;
}

/** A `.chunks.jsonl` fixture (one event per line) as the SSE text a server sends: `event:` named by `type`. */
export function sseOfChunks(file: string): string {
  return fixtureText(file)
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => `event: ${(JSON.parse(line) as { type: string }).type}\ndata: ${line}\n\n`)
    .join("");
}

export interface CheckedStream {
  events: Json[];
  /** The response as the events' items, parts and deltas build it, without the last event's snapshot. */
  assembled: Json;
  /** The response the last event carries. */
  last: Json;
}

/**
 * Reads a Responses stream as a strict client would, and throws at the first broken rule: every event named as
 * its `type`, sequence numbers 0, 1, 2..., `response.created` first and a final event last, items added in output
 * order and done whole, each delta for the open item and part, and every done item equal to what its deltas built.
 */
export function checkResponsesStream(text: string): CheckedStream {
  const messages = parseSse(text);
  const events: Json[] = [];
  let shell: Json | undefined;
  let last: Json | undefined;
  const output: ResponsesItem[] = [];
  let open: ResponsesItem | undefined;
  const fail = (message: string, event: Json): never => {
    throw new Error(`${message} at event ${events.length - 1} ${JSON.stringify(event).slice(0, 300)}`);
  };
  for (const message of messages) {
    const event = JSON.parse(message.data) as Json;
    events.push(event);
    if (message.event !== event.type) fail(`the SSE event name ${message.event} is not the type`, event);
    if (event.sequence_number !== events.length - 1) fail(`sequence_number ${event.sequence_number}`, event);
    if (last !== undefined) fail("an event after the final one", event);
    const type = event.type as string;
    if (events.length === 1 && type !== "response.created") fail("the first event is not response.created", event);
    switch (type) {
      case "response.created":
      case "response.in_progress":
        shell = event.response as Json;
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        if (open !== undefined) fail("the response ended with an item open", event);
        last = event.response as Json;
        break;
      case "error":
        break;
      case "response.output_item.added":
        if (open !== undefined) fail("an item added while another is open", event);
        if (event.output_index !== output.length) fail("an item added out of order", event);
        open = structuredClone(event.item) as ResponsesItem;
        break;
      case "response.output_item.done":
        if (open === undefined || event.output_index !== output.length) fail("an item done that is not open", event);
        if (!sameItem(open!, event.item as ResponsesItem)) {
          fail(`the done item differs from what its events built: ${JSON.stringify(open)}`, event);
        }
        output.push(event.item as ResponsesItem);
        open = undefined;
        break;
      default:
        if (open === undefined || event.output_index !== output.length) fail("a delta for no open item", event);
        applyDelta(open!, event, fail);
    }
  }
  if (shell === undefined || last === undefined)
    throw new Error("the stream has no response.created or no final event");
  return { events, assembled: { ...last, output }, last };
}

/** An item as built from its events, against the item `done` carries (statuses and ids given whole there). */
function sameItem(built: ResponsesItem, done: ResponsesItem): boolean {
  const { status: _a, ...left } = built;
  const { status: _b, encrypted_content: _c, ...right } = done;
  const { encrypted_content: _d, ...leftRest } = left;
  return isDeepStrictEqual(leftRest, right);
}

function applyDelta(item: ResponsesItem, event: Json, fail: (message: string, event: Json) => never): void {
  const content = item.content as Json[] | undefined;
  const summary = item.summary as Json[] | undefined;
  switch (event.type) {
    case "response.content_part.added":
      if (!Array.isArray(content) || event.content_index !== content.length) fail("a part added out of order", event);
      content!.push(structuredClone(event.part) as Json);
      return;
    case "response.output_text.delta":
    case "response.refusal.delta": {
      const part = content?.[event.content_index as number];
      if (part === undefined) fail("a text delta for no part", event);
      const key = event.type === "response.refusal.delta" ? "refusal" : "text";
      part![key] = `${part![key] as string}${event.delta as string}`;
      return;
    }
    case "response.output_text.done":
    case "response.refusal.done": {
      const part = content?.[event.content_index as number];
      const key = event.type === "response.refusal.done" ? "refusal" : "text";
      if (part?.[key] !== event[key]) fail("a text done that differs from its deltas", event);
      return;
    }
    case "response.content_part.done":
      if (!isDeepStrictEqual(content?.[event.content_index as number], event.part))
        fail("a part done that differs from its deltas", event);
      return;
    case "response.reasoning_summary_part.added":
      if (!Array.isArray(summary) || event.summary_index !== summary.length) fail("a summary part out of order", event);
      summary!.push(structuredClone(event.part) as Json);
      return;
    case "response.reasoning_summary_text.delta": {
      const part = summary?.[event.summary_index as number];
      if (part === undefined) fail("a summary delta for no part", event);
      part!.text = `${part!.text as string}${event.delta as string}`;
      return;
    }
    case "response.reasoning_summary_text.done":
      if (summary?.[event.summary_index as number]?.text !== event.text) fail("a summary done that differs", event);
      return;
    case "response.reasoning_summary_part.done":
      if (!isDeepStrictEqual(summary?.[event.summary_index as number], event.part))
        fail("a summary part differs", event);
      return;
    case "response.function_call_arguments.delta":
      item.arguments = `${item.arguments as string}${event.delta as string}`;
      return;
    case "response.function_call_arguments.done":
      if (item.arguments !== event.arguments) fail("arguments done that differ from their deltas", event);
      return;
    case "response.custom_tool_call_input.delta":
      item.input = `${item.input as string}${event.delta as string}`;
      return;
    case "response.custom_tool_call_input.done":
      if (item.input !== event.input) fail("custom input done that differs from its deltas", event);
      return;
    default:
      fail(`an event type the SDK does not know`, event);
  }
}
