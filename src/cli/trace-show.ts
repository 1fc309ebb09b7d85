import type { TraceRecord } from "../store/types.js";
import { escapeControls } from "./terminal-text.js";

/** How many lossy or repair entries the compact view lists before counting the rest. */
const COMPACT_ENTRIES = 10;
const PREVIEW_CHARS = 160;

/**
 * A trace for a person, compact: who asked what of whom, how it went, one line per body (with the last message
 * asked and the answer's text), and the reports. A Claude Code turn fits on a screen; `formatTraceFull` has
 * the bodies.
 */
export function formatTrace(trace: TraceRecord): string {
  const lines = [...heading(trace), ""];
  const bodies: Array<[string, string | undefined]> = [
    ["client request", trace.clientRequest],
    ["upstream request", trace.upstreamRequest],
    ["upstream response", trace.upstreamResponse],
    ["client response", trace.clientResponse],
  ];
  for (const [title, body] of bodies) lines.push(...bodySummary(title, body));
  lines.push("", ...reports(trace, COMPACT_ENTRIES));
  lines.push("", "--full shows the bodies side by side; --json the stored record, every body exactly as it was sent");
  return lines.join("\n");
}

/** A trace for a person, whole: the client's side on the left, the upstream's on the right, then the reports. */
export function formatTraceFull(trace: TraceRecord, width = 160): string {
  const left = [...section("request", trace.clientRequest), "", ...section("response", trace.clientResponse)];
  const right = [...section("request", trace.upstreamRequest), "", ...section("response", trace.upstreamResponse)];
  return [
    ...heading(trace),
    "",
    ...columns("CLIENT", left, "UPSTREAM", right, width),
    "",
    ...reports(trace, Number.POSITIVE_INFINITY),
  ].join("\n");
}

function heading(trace: TraceRecord): string[] {
  const safe = escapeControls;
  const lines = [`trace ${safe(trace.id)}  request ${safe(trace.requestId)}`];
  lines.push(
    [
      safe(trace.createdAt),
      safe(trace.route),
      trace.status === undefined ? undefined : `status ${trace.status}`,
      trace.durationMs === undefined ? undefined : `${Math.round(trace.durationMs)} ms`,
      trace.stream === undefined ? undefined : trace.stream ? "stream" : "whole answer",
    ]
      .filter(Boolean)
      .join("  "),
  );
  const asked = trace.clientModel === undefined ? "-" : safe(trace.clientModel);
  const upstream = [trace.provider, trace.upstreamModel]
    .filter((part) => part !== undefined)
    .map((part) => safe(part!));
  lines.push(`model ${asked} -> ${upstream.length > 0 ? upstream.join(" ") : "-"}`);
  const context = [
    trace.conversationId === undefined ? undefined : `conversation ${safe(trace.conversationId)}`,
    trace.tenant === undefined ? undefined : `tenant ${safe(trace.tenant)}`,
    trace.inputTokens === undefined && trace.outputTokens === undefined
      ? undefined
      : `tokens ${trace.inputTokens ?? "-"} in, ${trace.outputTokens ?? "-"} out`,
  ].filter(Boolean);
  if (context.length > 0) lines.push(context.join("  "));
  const timings = Object.entries(trace.timings).map(([name, ms]) => `${safe(name)} ${Math.round(ms * 10) / 10} ms`);
  if (timings.length > 0) lines.push(`timings: ${timings.join(", ")}`);
  return lines;
}

function reports(trace: TraceRecord, limit: number): string[] {
  const list = (entries: readonly unknown[], describe: (entry: never) => string) => {
    const shown = entries.slice(0, limit).map((entry) => `  - ${escapeControls(describe(entry as never))}`);
    if (entries.length > limit) shown.push(`  ... ${entries.length - limit} more (--full)`);
    return shown;
  };
  return [
    `lossy (${trace.lossy.length})`,
    ...list(
      trace.lossy,
      (entry: TraceRecord["lossy"][number]) =>
        `${entry.code}${entry.path ? ` at ${entry.path}` : ""}: ${entry.message}`,
    ),
    `repair (${trace.repair.length})`,
    ...list(trace.repair, (entry: unknown) => JSON.stringify(entry)),
  ];
}

/** One line of size and shape per body, and one of content: the last message asked, or the answer's text. */
function bodySummary(title: string, body: string | undefined): string[] {
  const label = title.padEnd(18);
  if (body === undefined) return [`${label}(not recorded)`];
  const size = `${Buffer.byteLength(body).toLocaleString("en-US")} bytes`;
  const json = parseJson(body);
  if (isObject(json) && Array.isArray(json.messages)) {
    const shape = [
      typeof json.model === "string" ? `model ${escapeControls(json.model)}` : undefined,
      `${json.messages.length} messages`,
      Array.isArray(json.tools) ? `${json.tools.length} tools` : undefined,
      json.system === undefined
        ? undefined
        : `system ${JSON.stringify(json.system).length.toLocaleString("en-US")} chars`,
    ].filter(Boolean);
    const last = json.messages.at(-1) as unknown;
    const role = isObject(last) && typeof last.role === "string" ? last.role : "?";
    return [`${label}${size}, ${shape.join(", ")}`, `  last ${escapeControls(role)}: ${preview(messageText(last))}`];
  }
  if (json !== undefined) return [`${label}${size}, JSON`, `  text: ${preview(answerText(json))}`];
  const events = body.split(/\r?\n\r?\n/).filter((event) => /^data:/m.test(event));
  if (events.length > 0) {
    const text = events
      .map((event) => answerText(parseJson(event.replace(/^(?!data:).*$/gm, "").replace(/^data: ?/gm, ""))))
      .join("");
    return [`${label}${size}, event stream of ${events.length} events`, `  text: ${preview(text)}`];
  }
  return [`${label}${size}`, `  ${preview(body)}`];
}

/** The text a request message carries, whatever the API: a string, or its blocks' text and tool results. */
function messageText(message: unknown): string {
  if (!isObject(message)) return "";
  const content = message.content;
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return Array.isArray(message.tool_calls) ? JSON.stringify(message.tool_calls) : "";
  return content
    .map((block) => {
      if (!isObject(block)) return "";
      if (typeof block.text === "string") return block.text;
      if (block.type === "tool_result") return `[tool_result] ${messageText(block)}`;
      if (block.type === "tool_use") return `[tool_use ${String(block.name)}] ${JSON.stringify(block.input)}`;
      return `[${String(block.type)}]`;
    })
    .join(" ");
}

/** An answer's (or one stream event's) text: Anthropic content and deltas, Chat Completions messages and deltas. */
function answerText(value: unknown): string {
  if (!isObject(value)) return "";
  if (Array.isArray(value.content)) return messageText(value);
  const delta = value.delta;
  if (isObject(delta)) {
    if (typeof delta.text === "string") return delta.text;
    if (typeof delta.thinking === "string") return delta.thinking;
    if (typeof delta.partial_json === "string") return delta.partial_json;
  }
  if (isObject(value.error)) return `[error] ${String(value.error.message ?? "")}`;
  if (Array.isArray(value.choices)) {
    const choice = value.choices[0] as unknown;
    if (!isObject(choice)) return "";
    const part = isObject(choice.delta) ? choice.delta : isObject(choice.message) ? choice.message : undefined;
    if (part === undefined) return "";
    const calls = Array.isArray(part.tool_calls) ? part.tool_calls.map((call) => JSON.stringify(call)).join("") : "";
    return `${typeof part.content === "string" ? part.content : ""}${calls}`;
  }
  return "";
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "(none)";
  return escapeControls(flat.length > PREVIEW_CHARS ? `${flat.slice(0, PREVIEW_CHARS)}...` : flat);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

function section(title: string, value: string | undefined): string[] {
  return [`-- ${title} --`, ...(value === undefined ? ["(not recorded)"] : pretty(value))];
}

/** JSON is indented; an event stream and other text is shown as it came; controls are escaped either way. */
function pretty(value: string): string[] {
  const json = parseJson(value);
  const lines =
    json === undefined
      ? value.replace(/\t/g, "  ").replace(/\n+$/, "").split(/\r?\n/)
      : JSON.stringify(json, null, 2).split("\n");
  return lines.map(escapeControls);
}

function columns(leftTitle: string, left: string[], rightTitle: string, right: string[], width: number): string[] {
  const columnWidth = Math.max(20, Math.floor((width - 3) / 2));
  const leftLines = [leftTitle, ...left].flatMap((line) => wrap(line, columnWidth));
  const rightLines = [rightTitle, ...right].flatMap((line) => wrap(line, columnWidth));
  const rows: string[] = [];
  for (let row = 0; row < Math.max(leftLines.length, rightLines.length); row++) {
    rows.push(`${(leftLines[row] ?? "").padEnd(columnWidth)} | ${rightLines[row] ?? ""}`.trimEnd());
  }
  return rows;
}

function wrap(line: string, width: number): string[] {
  if (line.length <= width) return [line];
  const pieces: string[] = [];
  for (let start = 0; start < line.length; start += width) pieces.push(line.slice(start, start + width));
  return pieces;
}
