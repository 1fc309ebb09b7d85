import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { openStore } from "../store/open-store.js";
import type { ConversationStore, TraceRecord, TraceSummary } from "../store/types.js";
import type { CommandIo } from "./io.js";

export const DEFAULT_STORE_URL = "sqlite:./.parley/parley.db";

const usage = `Usage: parley trace list [--store URL] [--limit N] [--json]
       parley trace show ID [--store URL] [--width N] [--json]

Shows the exchanges the gateway recorded (API keys are redacted before they are stored).

  list         the newest traces first: id, time, route, provider, model, status
  show ID      one trace: the client's side and the upstream's side next to each other,
               then what could not be carried (lossy), what repair changed, and timings

Options:
  --store URL  sqlite:PATH, postgres://... or memory: (default: $PARLEY_STORE or ${DEFAULT_STORE_URL})
  --limit N    how many traces to list (default 20)
  --width N    total width of the side-by-side view (default 160)
  --json       print the stored JSON instead
`;

/** `parley trace list|show`: reads traces from the store; never prunes or writes. */
export async function runTrace(argv: string[], io: CommandIo): Promise<number> {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    io.stderr(`parley trace: ${error instanceof Error ? error.message : String(error)}\n\n${usage}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    io.stdout(usage);
    return 0;
  }
  const [action, id, ...extra] = positionals;
  if ((action !== "list" && action !== "show") || (action === "show" && id === undefined) || extra.length > 0) {
    io.stderr(`parley trace: expected 'list' or 'show ID'\n\n${usage}`);
    return 2;
  }
  const limit = numberOption(values.limit, 20);
  const width = numberOption(values.width, 160);
  if (limit === undefined || width === undefined) {
    io.stderr("parley trace: --limit and --width take a positive whole number\n");
    return 2;
  }
  const url = values.store ?? process.env.PARLEY_STORE ?? DEFAULT_STORE_URL;
  if (url.startsWith("sqlite:") && !url.includes(":memory:") && !existsSync(url.slice("sqlite:".length))) {
    io.stderr(`parley trace: no store at ${url.slice("sqlite:".length)} (set --store or PARLEY_STORE)\n`);
    return 1;
  }
  const store = await openStore(url, { traceRetention: false });
  try {
    return action === "list"
      ? await list(store, io, limit, values.json)
      : await show(store, io, id!, width, values.json);
  } finally {
    await store.close();
  }
}

function parse(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      store: { type: "string" },
      limit: { type: "string" },
      width: { type: "string" },
      json: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
  });
}

function numberOption(value: string | undefined, fallback: number): number | undefined {
  if (value === undefined) return fallback;
  const number = Number(value);
  return Number.isInteger(number) && number > 0 ? number : undefined;
}

async function list(store: ConversationStore, io: CommandIo, limit: number, json: boolean): Promise<number> {
  const traces = await store.listTraces({ limit });
  if (json) {
    io.stdout(`${JSON.stringify(traces, null, 2)}\n`);
    return 0;
  }
  if (traces.length === 0) {
    io.stdout("no traces recorded\n");
    return 0;
  }
  io.stdout(`${formatTraceList(traces)}\n`);
  return 0;
}

async function show(
  store: ConversationStore,
  io: CommandIo,
  id: string,
  width: number,
  json: boolean,
): Promise<number> {
  const trace = await store.getTrace(id);
  if (!trace) {
    io.stderr(`parley trace: no trace with id '${id}' (see 'parley trace list')\n`);
    return 1;
  }
  io.stdout(json ? `${JSON.stringify(trace, null, 2)}\n` : `${formatTrace(trace, width)}\n`);
  return 0;
}

export function formatTraceList(traces: readonly TraceSummary[]): string {
  const rows = traces.map((trace) => [
    trace.id,
    trace.createdAt,
    trace.route,
    trace.provider ?? "-",
    trace.model ?? "-",
    trace.status === undefined ? "-" : String(trace.status),
  ]);
  const header = ["ID", "TIME", "ROUTE", "PROVIDER", "MODEL", "STATUS"];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}

/** A trace for a person: the client's side on the left, the upstream's on the right, then the reports. */
export function formatTrace(trace: TraceRecord, width = 160): string {
  const heading = [
    `trace ${trace.id}  request ${trace.requestId}`,
    [
      trace.createdAt,
      trace.route,
      trace.provider && `provider ${trace.provider}`,
      trace.model && `model ${trace.model}`,
    ]
      .filter(Boolean)
      .join("  ") + (trace.status === undefined ? "" : `  status ${trace.status}`),
  ];
  const timings = Object.entries(trace.timings).map(([name, ms]) => `${name} ${ms} ms`);
  if (timings.length > 0) heading.push(`timings: ${timings.join(", ")}`);
  const left = [...section("request", trace.clientRequest), "", ...section("response", trace.clientResponse)];
  const right = [...section("request", trace.upstreamRequest), "", ...section("response", trace.upstreamResponse)];
  const reports = [
    "",
    `lossy (${trace.lossy.length})`,
    ...trace.lossy.map((entry) => `  - ${entry.code}${entry.path ? ` at ${entry.path}` : ""}: ${entry.message}`),
    `repair (${trace.repair.length})`,
    ...trace.repair.map((entry) => `  - ${JSON.stringify(entry)}`),
  ];
  return [...heading, "", ...columns("CLIENT", left, "UPSTREAM", right, width), ...reports].join("\n");
}

function section(title: string, value: unknown): string[] {
  return [`-- ${title} --`, ...(value === undefined ? ["(not recorded)"] : pretty(value))];
}

/** JSON is indented; a JSON string is parsed first; SSE and other text is shown as it came. */
function pretty(value: unknown): string[] {
  if (typeof value === "string") {
    try {
      return JSON.stringify(JSON.parse(value), null, 2).split("\n");
    } catch {
      return value.replace(/\t/g, "  ").replace(/\n+$/, "").split(/\r?\n/);
    }
  }
  return (JSON.stringify(value, null, 2) ?? String(value)).split("\n");
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
