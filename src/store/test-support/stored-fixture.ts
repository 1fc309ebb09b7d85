import type { StreamEvent } from "../../core/index.js";
import { openStore, type Store } from "../open-store.js";
import type { TraceRecord } from "../traces/trace-store.js";

/** Everything a store holds for the fixture's owners, read back through the store's own calls. */
export async function readFixtureStore(url: string): Promise<unknown> {
  const store = await openStore(url, { traceRetention: false });
  try {
    const owners = ["default", "team-a"];
    const conversations: Record<string, unknown> = {};
    for (const owner of owners) {
      const listed = await store.conversations.list({ owner });
      conversations[owner] = {
        listed,
        whole: await Promise.all(listed.map((summary) => store.conversations.get(summary.id, { owner }))),
        loaded: await Promise.all(listed.map((summary) => store.conversations.load(summary.id, { owner }))),
      };
    }
    const answers = {
      first: await store.answers.get("resp_first", { owner: "team-a" }),
      chain: await store.answers.chain("resp_second", { owner: "team-a" }),
      otherOwner: (await store.answers.get("resp_first")) ?? null,
    };
    const listed = await store.traces.list({ limit: 2 });
    const next = listed.nextCursor === undefined ? undefined : await store.traces.list({ cursor: listed.nextCursor });
    const summaries = [...listed.traces, ...(next?.traces ?? [])];
    const traces = {
      summaries,
      whole: await Promise.all(summaries.map((summary) => store.traces.get(summary.id))),
      ofTenant: await store.traces.list({ tenant: "team-a" }),
      withLosses: await store.traces.list({ hasLosses: true }),
      usage: await store.traces.usage(),
    };
    return { conversations, answers, traces };
  } finally {
    await store.close();
  }
}

/** Two conversations of two owners, two stored answers in a chain and three traces: what the fixture holds. */
export async function fillFixtureStore(store: Store): Promise<void> {
  // A conversation of the default owner: messages appended with the client's own JSON, one without.
  const first = await store.conversations.create({ id: "conv-agent", metadata: { agent: "coder", turn: 2 } });
  const question = `{"role":"user","content":[{"type":"text","text":"What is in /tmp?","cache_control":{"type":"ephemeral"}}]}`;
  await store.conversations.append(
    first.id,
    [
      {
        role: "user",
        parts: [
          { type: "text", text: "What is in /tmp?", extra: { anthropic: { cache_control: { type: "ephemeral" } } } },
        ],
      },
      {
        role: "assistant",
        parts: [
          { type: "thinking", thinking: "List it.", signature: "c2lnbmF0dXJl" },
          { type: "text", text: "Let me look." },
          { type: "tool_call", id: "toolu_01", name: "ls", input: { path: "/tmp" } },
        ],
      },
    ],
    { sources: [{ format: "anthropic", json: question }, undefined] },
  );
  await store.conversations.append(first.id, [
    {
      role: "user",
      parts: [{ type: "tool_result", toolCallId: "toolu_01", content: "a.txt\nb.txt" }],
    },
  ]);
  // The answer to it cut off midway: an incomplete message, as a failed upstream leaves one.
  const writer = await store.conversations.startMessage(first.id, "assistant");
  const events: StreamEvent[] = [
    { type: "message-start", id: "msg_01", model: "claude-sonnet-4" },
    { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
    { type: "thinking-delta", index: 0, thinking: "Two files" },
    { type: "block-end", index: 0 },
    { type: "block-start", index: 1, part: { type: "text", text: "" } },
    { type: "text-delta", index: 1, text: "There are two fi" },
  ];
  for (const event of events) writer.push(event);
  await writer.abort();

  // Another owner's conversation, from an OpenAI client, with a system message in place.
  const second = await store.conversations.create({ id: "conv-team", metadata: { client: "codex" }, owner: "team-a" });
  await store.conversations.append(
    second.id,
    [
      { role: "system", parts: [{ type: "text", text: "Be brief." }] },
      { role: "user", parts: [{ type: "text", text: "Hi" }] },
    ],
    {
      owner: "team-a",
      sources: [
        { format: "openai", json: `{"role":"system","content":"Be brief."}` },
        { format: "openai", json: `{"role":"user","content":"Hi"}` },
      ],
    },
  );
  const complete = await store.conversations.startMessage(second.id, "assistant", { owner: "team-a" });
  complete.push({ type: "message-start", id: "chatcmpl-1", model: "gpt-4o" });
  complete.push({ type: "block-start", index: 0, part: { type: "text", text: "" } });
  complete.push({ type: "text-delta", index: 0, text: "Hello." });
  complete.push({ type: "block-end", index: 0 });
  await complete.complete();

  // Stored Responses answers: one continuing another, of one owner.
  await store.answers.save(
    {
      id: "resp_first",
      createdAt: "2026-01-02T03:04:05.678Z",
      messages: [
        { role: "user", parts: [{ type: "text", text: "Name a colour." }] },
        { role: "assistant", parts: [{ type: "text", text: "Blue." }] },
      ],
      body: {
        id: "resp_first",
        object: "response",
        output: [{ type: "message", content: [{ type: "output_text", text: "Blue." }] }],
      },
    },
    { owner: "team-a" },
  );
  await store.answers.save(
    {
      id: "resp_second",
      createdAt: "2026-01-02T03:04:09.000Z",
      previousId: "resp_first",
      messages: [
        { role: "user", parts: [{ type: "text", text: "Another." }] },
        { role: "assistant", parts: [{ type: "text", text: "Red." }] },
      ],
      body: { id: "resp_second", object: "response", previous_response_id: "resp_first" },
    },
    { owner: "team-a" },
  );

  // Traces: a whole answer with a loss and a repair, a streamed one with arrivals, a failed one of a tenant.
  const history = Array.from({ length: 30 }, (_, index) => ({
    role: "user",
    content: `turn ${index} ${"x".repeat(150)}`,
  }));
  const traces: TraceRecord[] = [
    {
      id: "20260102030405-trace-a",
      requestId: "20260102030405-req-a",
      createdAt: "2026-01-02T03:04:05.000Z",
      route: "/v1/messages",
      provider: "local",
      clientModel: "claude-sonnet-4",
      upstreamModel: "qwen3",
      status: 200,
      durationMs: 812.5,
      inputTokens: 1200,
      outputTokens: 34,
      conversationId: "conv-agent",
      tenant: "default",
      stream: false,
      clientRequest: JSON.stringify({ model: "claude-sonnet-4", max_tokens: 1024, messages: history }),
      upstreamRequest: JSON.stringify({ model: "qwen3", messages: history }),
      upstreamResponse: `{"id":"chatcmpl-9","choices":[{"message":{"role":"assistant","content":"Done."},"finish_reason":"stop"}]}`,
      clientResponse: `{"id":"msg_9","type":"message","role":"assistant","content":[{"type":"text","text":"Done."}]}`,
      lossy: [{ code: "field-dropped", message: "cache_control is not sent", path: "messages[0].content[0]" }],
      repair: [{ pass: "close-orphaned-calls", messageIndex: 3 }],
      timings: { totalMs: 812.5, upstreamMs: 790.25 },
      storedMessages: 2,
      lossyStages: { clientRequest: 0, upstreamRequest: 1 },
    },
    {
      id: "20260102030406-trace-b",
      requestId: "20260102030406-req-b",
      createdAt: "2026-01-02T03:04:06.000Z",
      route: "/v1/chat/completions",
      provider: "anthropic",
      clientModel: "gpt-4o",
      upstreamModel: "claude-sonnet-4",
      status: 200,
      durationMs: 1500,
      stream: true,
      tenant: "team-a",
      clientRequest: JSON.stringify({ model: "gpt-4o", stream: true, messages: history.slice(0, 29) }),
      upstreamResponse: `event: message_start\ndata: {"type":"message_start"}\n\nevent: message_stop\ndata: {"type":"message_stop"}\n\n`,
      clientResponse: `data: {"choices":[{"delta":{"content":"Hi"}}]}\n\ndata: [DONE]\n\n`,
      lossy: [],
      repair: [],
      timings: { totalMs: 1500 },
      arrivals: { upstreamResponse: [0, 412.5, 60, 430.1], clientResponse: [0, 415, 49, 432] },
    },
    {
      id: "20260102030407-trace-c",
      requestId: "20260102030407-req-c",
      createdAt: "2026-01-02T03:04:07.000Z",
      route: "/v1/responses",
      status: 502,
      tenant: "team-a",
      clientRequest: `{"model":"o3","input":"hi","authorization":"Bearer sk-secret-should-go"}`,
      clientResponse: `{"error":{"type":"api_error","message":"upstream unreachable"}}`,
      lossy: [],
      repair: [],
      timings: {},
    },
  ];
  await Promise.all(traces.map((trace) => store.traces.record(trace)));
}

/**
 * A PostgreSQL schema's tables as SQL that rebuilds them elsewhere: the schema steps as they were applied, then every
 * row (through its JSON, so that each value keeps its type), then the identity counters. Run on a connection whose
 * `search_path` is an empty schema.
 */
export async function dumpPostgresSchema(
  query: (text: string, values?: unknown[]) => Promise<{ rows: unknown[] }>,
  steps: ReadonlyArray<{ sql: string }>,
): Promise<string> {
  const out = [
    "CREATE TABLE schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL);",
    ...steps.map((step) => `${step.sql.trim()}`),
  ];
  const tables = (
    await query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE' ORDER BY table_name",
    )
  ).rows as Array<{ table_name: string }>;
  // Parents before children (foreign keys): conversations, messages, parts; the rest in any order.
  const order = ["schema_migrations", "conversations", "messages", "parts"];
  const names = tables.map((table) => table.table_name);
  names.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b));
  for (const name of names) {
    if (name === "trace_totals") out.push("DELETE FROM trace_totals;");
    const rows = (await query(`SELECT row_to_json(t)::text AS row FROM ${name} t ORDER BY 1`)).rows as Array<{
      row: string;
    }>;
    for (const { row } of rows) {
      if (row.includes("$row$")) throw new Error(`a row of ${name} holds the dump's quote`);
      out.push(
        `INSERT INTO ${name} OVERRIDING SYSTEM VALUE SELECT * FROM json_populate_record(NULL::${name}, $row$${row}$row$);`,
      );
    }
  }
  const identities = (
    await query(
      "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = current_schema() AND is_identity = 'YES' ORDER BY table_name",
    )
  ).rows as Array<{ table_name: string; column_name: string }>;
  for (const { table_name: table, column_name: column } of identities) {
    out.push(
      `SELECT setval(pg_get_serial_sequence('${table}', '${column}'), coalesce((SELECT max(${column}) FROM ${table}), 0) + 1, false);`,
    );
  }
  return `${out.join("\n")}\n`;
}
