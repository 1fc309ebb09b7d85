import type { ViewedPart } from "../formats/adapter.js";
import { type ReadBody, readExchange } from "../inspect/exchange-view.js";
import { blockOf } from "../inspect/part-view.js";
import { splitEvents } from "../inspect/stream-view.js";
import { redactView } from "../store/traces/redact.js";
import type { TraceRecord } from "../store/traces/trace-store.js";
import { escapeControls } from "./terminal-text.js";

/** How many lossy or repair entries, or blocks of an answer, the compact view lists before counting the rest. */
const COMPACT_ENTRIES = 10;
const PREVIEW_CHARS = 160;
/** The roles whose messages are a request's system prompt, counted apart from its conversation. */
const SYSTEM_ROLES = new Set(["system", "developer"]);

/**
 * A trace for a person, compact: who asked what of whom, how it went, each body summed up (with the last message
 * asked, and the answer's blocks: its thinking, text and tool calls), and the reports. A Claude Code turn fits on a screen; `formatTraceFull` has
 * the bodies.
 */
export function formatTrace(trace: TraceRecord): string {
  const lines = [...heading(trace), ""];
  // The provider's format is the configuration's, not at hand here: the upstream request or answer shows it.
  // What the bodies hold apart (stream deltas, escapes) a view puts together: redacted again, as the inspector does.
  const read = redactView(readExchange(trace, undefined), []);
  lines.push(
    ...bodySummary("client request", trace.clientRequest, read.clientRequest, "request"),
    ...bodySummary("upstream request", trace.upstreamRequest, read.upstreamRequest, "request"),
    ...bodySummary("upstream response", trace.upstreamResponse, read.upstreamResponse, "response"),
    ...bodySummary("client response", trace.clientResponse, read.clientResponse, "response"),
  );
  lines.push("", ...reports(trace, COMPACT_ENTRIES));
  lines.push("", "--full shows the bodies side by side; --json the stored record, every body exactly as it was sent");
  return lines.join("\n");
}

/** A trace for a person, whole: the client's side on the left, the upstream's on the right, then the reports. */
export function formatTraceFull(trace: TraceRecord, width = 160): string {
  const left = redactView(
    [...section("request", trace.clientRequest), "", ...section("response", trace.clientResponse)],
    [],
  );
  const right = redactView(
    [...section("request", trace.upstreamRequest), "", ...section("response", trace.upstreamResponse)],
    [],
  );
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
  const from = trace.switchedFrom;
  if (from !== undefined) {
    lines.push(`model switched from ${safe(from.provider)} ${safe(from.model)}: the provider's cache was empty`);
  }
  const context = [
    trace.conversationId === undefined ? undefined : `conversation ${safe(trace.conversationId)}`,
    trace.tenant === undefined ? undefined : `tenant ${safe(trace.tenant)}`,
    trace.inputTokens === undefined && trace.outputTokens === undefined
      ? undefined
      : `tokens ${trace.inputTokens ?? "-"} in, ${cacheText(trace)}${trace.outputTokens ?? "-"} out`,
  ].filter(Boolean);
  if (context.length > 0) lines.push(context.join("  "));
  const timings = Object.entries(trace.timings).map(([name, ms]) => `${safe(name)} ${Math.round(ms * 10) / 10} ms`);
  if (timings.length > 0) lines.push(`timings: ${timings.join(", ")}`);
  return lines;
}

/** `800 cached, 0 written, `: the cache's figures, for a trace that kept them. */
function cacheText(trace: TraceRecord): string {
  if (trace.cacheReadTokens === undefined) return "";
  return `${trace.cacheReadTokens} cached, ${trace.cacheWriteTokens ?? 0} written, `;
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

/**
 * One line of size and shape per body, then its content as its format's view reads it (the adapters' readers the
 * inspector uses): the last message of a request, every block of an answer (text, thinking, tool calls).
 */
function bodySummary(title: string, body: string | undefined, read: ReadBody, kind: "request" | "response"): string[] {
  const label = title.padEnd(18);
  if (body === undefined) return [`${label}(not recorded)`];
  const size = `${Buffer.byteLength(body).toLocaleString("en-US")} bytes`;
  const json = parseJson(body) !== undefined;
  const events = json ? 0 : splitEvents(body).filter((event) => !event.comment && event.data !== "").length;
  const shape = json ? "JSON" : events > 0 ? `event stream of ${events} events` : undefined;
  if (read.side.unread) return [[`${label}${size}`, shape].filter(Boolean).join(", "), `  ${preview(body)}`];
  const model = read.side.model ? `model ${escapeControls(read.side.model)}` : undefined;
  if (kind === "response") {
    const blocks = read.messages.flatMap((message) => message.parts.map(blockOf));
    const lines = blocks
      .slice(0, COMPACT_ENTRIES)
      .map((block) => `  ${escapeControls(block.title)}: ${preview(block.text)}`);
    if (blocks.length > COMPACT_ENTRIES) lines.push(`  ... ${blocks.length - COMPACT_ENTRIES} more blocks (--full)`);
    return [
      [`${label}${size}`, shape, model].filter(Boolean).join(", "),
      ...(lines.length > 0 ? lines : ["  text: (none)"]),
    ];
  }
  const system = read.messages.filter((message) => SYSTEM_ROLES.has(message.role));
  const messages = read.messages.filter((message) => !SYSTEM_ROLES.has(message.role));
  const systemChars = system.reduce(
    (sum, message) => sum + message.parts.map(blockOf).reduce((chars, block) => chars + block.text.length, 0),
    0,
  );
  const heading = [
    `${label}${size}`,
    model,
    `${messages.length} messages`,
    read.side.tools === undefined ? undefined : `${read.side.tools.length} tools`,
    system.length === 0 ? undefined : `system ${systemChars.toLocaleString("en-US")} chars`,
  ].filter(Boolean);
  const last = messages.at(-1);
  const role = last === undefined ? "?" : escapeControls(last.role);
  return [heading.join(", "), `  last ${role}: ${preview(last === undefined ? "" : inline(last.parts))}`];
}

/** A message's parts on one line: text as it is, any other part marked with its kind (`[tool_result] ...`). */
function inline(parts: readonly ViewedPart[]): string {
  return parts
    .map((viewed) => {
      const block = blockOf(viewed);
      if (viewed.part.type === "text") return block.text;
      if (viewed.part.type === "tool_call") return `[tool_call ${viewed.part.name}] ${block.text}`;
      return `[${block.kind}] ${block.text}`;
    })
    .join(" ");
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
