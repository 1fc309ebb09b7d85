import { existsSync } from "node:fs";
import { parseArgs } from "node:util";
import { openStore } from "../store/open-store.js";
import type { TraceQuery, TraceStore, TraceSummary } from "../store/traces/trace-store.js";
import type { CommandIo } from "./io.js";
import { escapeControls, terminalJson } from "./terminal-text.js";
import { formatTrace, formatTraceFull } from "./trace-show.js";

export const DEFAULT_STORE_URL = "sqlite:./.parley/parley.db";

const usage = `Usage: parley trace list [--store URL] [--limit N] [filters] [--cursor C] [--json]
       parley trace show ID [--store URL] [--full [--width N]] [--json]

Shows the exchanges the gateway recorded (API keys are redacted before they are stored).

  list         the newest traces first: id, time, route, the model asked for, provider and upstream
               model, status, duration, tokens, what could not be carried (lossy) and what repair changed
  show ID      one trace, by its id or by the request id that logs, headers and error bodies print:
               a compact view (the bodies summed up, the last message, the answer's text, the reports)

Filters of list (combined):
  --status S         a status (502), a class (5xx) or error (400 and above)
  --model M          the model the client asked for, or the upstream model
  --conversation ID  one stored conversation
  --losses           only traces where something could not be carried (--no-losses: none)
  --tenant T         one tenant

Options:
  --store URL  sqlite:PATH, postgres://... or memory: (default: $PARLEY_STORE or ${DEFAULT_STORE_URL})
  --limit N    how many traces to list (default 20); the next page's --cursor is printed after them
  --full       show every body whole, client and upstream side by side
  --width N    total width of the side-by-side view (default 160)
  --json       print the stored JSON instead (bodies exactly as they were sent)

Text from a trace is printed with control characters escaped (\\x1b, \\u202e): a client's model name or
message cannot move the cursor or rewrite the screen.
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
  const status = statusOption(values.status);
  if (status === null) {
    io.stderr("parley trace: --status takes a status (502), a class (5xx) or error\n");
    return 2;
  }
  const query: TraceQuery = { limit };
  if (status !== undefined) query.status = status;
  if (values.model !== undefined) query.model = values.model;
  if (values.conversation !== undefined) query.conversationId = values.conversation;
  if (values.tenant !== undefined) query.tenant = values.tenant;
  if (values.losses || values["no-losses"]) query.hasLosses = values.losses;
  if (values.cursor !== undefined) query.cursor = values.cursor;
  const url = values.store ?? process.env.PARLEY_STORE ?? DEFAULT_STORE_URL;
  if (url.startsWith("sqlite:") && !url.includes(":memory:") && !existsSync(url.slice("sqlite:".length))) {
    io.stderr(`parley trace: no store at ${url.slice("sqlite:".length)} (set --store or PARLEY_STORE)\n`);
    return 1;
  }
  const store = await openStore(url, { traceRetention: false });
  try {
    return action === "list"
      ? await list(store.traces, io, query, values.json)
      : await show(store.traces, io, id!, { width, full: values.full, json: values.json });
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
      status: { type: "string" },
      model: { type: "string" },
      conversation: { type: "string" },
      tenant: { type: "string" },
      losses: { type: "boolean", default: false },
      "no-losses": { type: "boolean", default: false },
      cursor: { type: "string" },
      full: { type: "boolean", default: false },
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

/** `502`, `5xx`, `error` (400 and above); null when it is none of those. */
function statusOption(value: string | undefined): TraceQuery["status"] | null | undefined {
  if (value === undefined) return undefined;
  if (value === "error") return { from: 400, to: 599 };
  const range = /^([1-5])xx$/i.exec(value);
  if (range) return { from: Number(range[1]) * 100, to: Number(range[1]) * 100 + 99 };
  return /^[1-5]\d\d$/.test(value) ? Number(value) : null;
}

async function list(traces: TraceStore, io: CommandIo, query: TraceQuery, json: boolean): Promise<number> {
  const page = await traces.list(query);
  if (json) {
    io.stdout(`${terminalJson(page)}\n`);
    return 0;
  }
  if (page.traces.length === 0) {
    io.stdout(query.cursor === undefined ? "no traces recorded\n" : "no more traces\n");
    return 0;
  }
  io.stdout(`${formatTraceList(page.traces)}\n`);
  if (page.nextCursor !== undefined) io.stdout(`more: --cursor ${page.nextCursor}\n`);
  return 0;
}

async function show(
  traces: TraceStore,
  io: CommandIo,
  id: string,
  view: { width: number; full: boolean; json: boolean },
): Promise<number> {
  const trace = await traces.get(id);
  if (!trace) {
    io.stderr(`parley trace: no trace with id or request id '${escapeControls(id)}' (see 'parley trace list')\n`);
    return 1;
  }
  const text = view.json ? terminalJson(trace) : view.full ? formatTraceFull(trace, view.width) : formatTrace(trace);
  io.stdout(`${text}\n`);
  return 0;
}

/** One line per trace; every cell escaped, as every cell comes from the client or the upstream. */
export function formatTraceList(traces: readonly TraceSummary[]): string {
  const rows = traces.map((trace) =>
    [
      trace.id,
      trace.createdAt,
      trace.route,
      trace.clientModel ?? "-",
      trace.provider ?? "-",
      trace.upstreamModel ?? "-",
      trace.status === undefined ? "-" : String(trace.status),
      trace.durationMs === undefined ? "-" : String(Math.round(trace.durationMs)),
      trace.inputTokens === undefined ? "-" : `${trace.inputTokens}/${trace.outputTokens ?? "-"}`,
      String(trace.lossyCount),
      String(trace.repairCount),
    ].map(escapeControls),
  );
  const header = [
    "ID",
    "TIME",
    "ROUTE",
    "MODEL",
    "PROVIDER",
    "UPSTREAM MODEL",
    "STATUS",
    "MS",
    "TOKENS",
    "LOSSY",
    "REPAIR",
  ];
  const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, column) => cell.padEnd(widths[column]!))
      .join("  ")
      .trimEnd();
  return [line(header), ...rows.map(line)].join("\n");
}
