import { request } from "undici";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, postStream, startTestGateway } from "../../../test/support/gateway-harness.js";
import { runClaudeCodeLikeSession, SESSION_MODEL, traceOf } from "../../../test/support/inspector-session.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import type { RunningGateway } from "../server.js";

/**
 * The inspector's HTTP side: what it serves, to whom, and what an exchange reads as. The page itself is driven
 * in a browser by test/e2e/inspector-browser.test.ts.
 */

const KEY = "sk-parley-client-key-0001";
const OTHER_KEY = "sk-parley-other-tenant-0002";
const UPSTREAM_KEY = "sk-upstream-secret-0003";

let upstream: ScriptedUpstream;
let gateway: RunningGateway;
let traceIds: string[];

/** GETs with `key` as x-api-key (null: none). */
const api = (path: string, key: string | null = KEY, headers: Record<string, string> = {}) =>
  getJson(`${gateway.url}${path}`, key === null ? headers : { "x-api-key": key, ...headers });

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { nim: { type: "openai", upstream, apiKey: UPSTREAM_KEY } },
    apiKeys: [KEY, OTHER_KEY],
    // A page of this origin may call the API; it still may not read traces.
    file: { allowedOrigins: ["https://app.example.com"] },
  });
  const replies = await runClaudeCodeLikeSession(gateway, upstream, { key: KEY });
  traceIds = [];
  for (const reply of replies) traceIds.push((await traceOf(gateway, reply)).id);
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

describe("what the inspector serves, and to whom", () => {
  test("the page and its assets need no key, carry a strict policy, and hold no data", async () => {
    const page = await request(`${gateway.url}/inspect`);
    const html = await page.body.text();
    expect(page.statusCode).toBe(200);
    expect(page.headers["content-type"]).toContain("text/html");
    const policy = String(page.headers["content-security-policy"]);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("frame-ancestors 'none'");
    expect(policy).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(html).not.toMatch(/<script>|https?:\/\//);
    expect(html).not.toContain("trace_");
    for (const [asset, type] of [
      ["inspector.js", "text/javascript"],
      ["inspector.css", "text/css"],
    ]) {
      const reply = await request(`${gateway.url}/inspect/assets/${asset}`);
      expect(reply.statusCode, `${asset} is built by npm run build`).toBe(200);
      expect(reply.headers["content-type"]).toContain(type);
      expect(await reply.body.text()).not.toMatch(/https?:\/\/(?!www\.w3\.org)/);
    }
    expect((await api("/inspect/assets/other.js", null)).status).toBe(404);
  });

  test("its data needs one of the API's keys, and a key sees its own tenant's exchanges only", async () => {
    expect((await api("/inspect/api/traces", null)).status).toBe(401);
    expect((await api("/inspect/api/traces", "sk-wrong")).status).toBe(401);
    const bearer = await api("/inspect/api/traces", null, { authorization: `Bearer ${KEY}` });
    expect(bearer.status).toBe(200);
    expect((bearer.body as Json).traces.map((trace: Json) => trace.id)).toEqual([...traceIds].reverse());
    const other = await api("/inspect/api/traces", OTHER_KEY);
    expect((other.body as Json).traces).toEqual([]);
    expect((await api(`/inspect/api/traces/${traceIds[0]}`, OTHER_KEY)).status).toBe(404);
  });

  test("nothing is served to another origin: other sites' requests are refused, no CORS header is given", async () => {
    const crossSite = await api("/inspect/api/traces", KEY, { "sec-fetch-site": "cross-site" });
    expect(crossSite.status).toBe(403);
    const foreignPage = await api("/inspect", null, { "sec-fetch-site": "cross-site" });
    expect(foreignPage.status).toBe(403);
    const stranger = await api("/inspect/api/traces", KEY, { origin: "https://evil.example" });
    expect(stranger.status).toBe(403);
    // An allowed origin may call the API; the inspector's answers still carry no CORS header to read them by.
    const allowed = await api("/inspect/api/traces", KEY, { origin: "https://app.example.com" });
    expect(Object.keys(allowed.headers).filter((name) => name.startsWith("access-control-"))).toEqual([]);
    const same = await api("/inspect/api/traces", KEY, { "sec-fetch-site": "same-origin" });
    expect(same.status).toBe(200);
  });

  test("--no-inspector: nothing at /inspect", async () => {
    const off = await startTestGateway({
      providers: { nim: { type: "openai", upstream } },
      file: { inspector: { enabled: false } },
    });
    try {
      expect((await getJson(`${off.url}/inspect`)).status).toBe(404);
      expect((await getJson(`${off.url}/inspect/api/traces`)).status).toBe(404);
    } finally {
      await off.close();
    }
  });
});

describe("the exchanges", () => {
  test("each row: time, route, models, status, duration, tokens and its report counts", async () => {
    const { traces } = (await api("/inspect/api/traces")).body as Json;
    expect(traces[0]).toMatchObject({
      id: traceIds[2],
      route: "POST /v1/messages",
      clientModel: SESSION_MODEL,
      provider: "nim",
      status: 200,
      stream: true,
      inputTokens: 1500,
      outputTokens: 20,
      repairCount: 1,
    });
    expect(traces[0].lossyCount).toBeGreaterThan(0);
    expect(traces[0].durationMs).toBeGreaterThan(0);
    expect(traces[0]).not.toHaveProperty("tenant");
  });

  test("filters: status, model, has losses; pages by cursor", async () => {
    const ids = async (query: string) =>
      ((await api(`/inspect/api/traces?${query}`)).body as Json).traces.map((trace: Json) => trace.id);
    expect(await ids("status=ok")).toEqual([...traceIds].reverse());
    expect(await ids("status=5xx")).toEqual([]);
    expect(await ids(`model=${SESSION_MODEL}`)).toHaveLength(3);
    expect(await ids("model=gpt-none")).toEqual([]);
    expect(await ids("losses=1")).toContain(traceIds[2]);
    expect(await ids("conversation=conv_none")).toEqual([]);
    const first = (await api("/inspect/api/traces?limit=2")).body as Json;
    expect(first.traces).toHaveLength(2);
    const second = (await api(`/inspect/api/traces?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`))
      .body as Json;
    expect(second.traces.map((trace: Json) => trace.id)).toEqual([traceIds[0]]);
    const bad = await api("/inspect/api/traces?status=teapot");
    expect(bad.status).toBe(400);
    expect((bad.body as Json).error.message).toContain("status");
  });
});

describe("one exchange", () => {
  const rowsOf = (pairing: Json): Json[] => pairing.rows;
  const notesOf = (block: Json | undefined): string[] => (block?.notes ?? []).map((note: Json) => note.code);

  test("the requests aligned block by block, the repair at the call it answered, the loss at the result it touched", async () => {
    const view = (await api(`/inspect/api/traces/${traceIds[2]}`)).body as Json;
    expect(view.request.left).toMatchObject({
      format: "Anthropic Messages",
      model: SESSION_MODEL,
      tools: ["Bash", "Read"],
    });
    expect(view.request.right.format).toBe("OpenAI Chat Completions");
    const rows = rowsOf(view.request);
    // The interrupted Read call: repair added its result, shown at the call in the client's request.
    const interrupted = rows.find((row) => row.left?.path === "messages[5].content[0]");
    expect(interrupted.left.title).toBe("tool call Read (call_3)");
    expect(notesOf(interrupted.left)).toEqual(["added-interrupted-tool-result"]);
    expect(interrupted.right.path).toBe("messages[6].tool_calls[0]");
    // The result repair added has no counterpart in what the client sent.
    const added = rows.find((row) => row.change === "added" && row.right?.kind === "tool_result");
    expect(added.right.title).toContain("call_3");
    // The failed npm test result lost its error flag: the loss is at the tool message it became.
    const failed = rows.find((row) => row.left?.path === "messages[4].content[0]");
    expect(failed.left.title).toBe("tool result (call_2), error");
    expect(failed.right.path).toBe("messages[5].content");
    expect([failed.change, failed.detail]).toEqual([
      "changed",
      "tool result (call_2), error became tool result (call_2)",
    ]);
    expect(notesOf(failed.right)).toEqual(["tool-error-flag-dropped"]);
    // The system prompt's cache_control, stripped, at the system block that had it.
    const cached = rows.find((row) => row.left?.path === "system[1]");
    expect(notesOf(cached.right)).toEqual(["cache_control-stripped"]);
    // Entries that name no block: listed once, above the bodies.
    expect(view.unplaced.map((note: Json) => note.code)).toContain("thinking-config-dropped");
    const placed = rows.flatMap((row) => [...notesOf(row.left), ...notesOf(row.right)]);
    expect(placed.length + view.unplaced.length).toBe(view.trace.lossyCount + view.trace.repairCount);
  });

  test("a streamed answer: both streams as events with their times, and the answer they add up to", async () => {
    const view = (await api(`/inspect/api/traces/${traceIds[1]}`)).body as Json;
    const upstreamEvents = view.streams.upstream.events;
    expect(upstreamEvents.at(-1).data).toBe("[DONE]");
    expect(upstreamEvents.every((event: Json) => typeof event.ms === "number")).toBe(true);
    const clientEvents = view.streams.client.events.map((event: Json) => event.event);
    expect(clientEvents[0]).toBe("message_start");
    expect(clientEvents.at(-1)).toBe("message_stop");
    const answer = rowsOf(view.response);
    expect(answer.map((row) => [row.left?.kind, row.right?.kind])).toEqual([
      ["thinking", "thinking"],
      ["tool_call", "tool_call"],
    ]);
    expect(answer[1].left.title).toBe("tool call Bash (call_2)");
  });

  test("the raw bodies, on demand; keys in none of it", async () => {
    const view = await api(`/inspect/api/traces/${traceIds[2]}`);
    for (const body of ["clientRequest", "upstreamRequest", "upstreamResponse", "clientResponse"]) {
      const raw = await request(`${gateway.url}/inspect/api/traces/${traceIds[2]}/raw?body=${body}`, {
        headers: { "x-api-key": KEY },
      });
      const text = await raw.body.text();
      expect(raw.statusCode).toBe(200);
      expect(raw.headers["content-type"]).toContain("text/plain");
      expect(raw.headers["content-security-policy"]).toContain("default-src 'none'");
      expect(text).not.toContain(KEY);
      expect(text).not.toContain(UPSTREAM_KEY);
    }
    expect(view.text).not.toContain(KEY);
    expect(view.text).not.toContain(UPSTREAM_KEY);
    expect((await api(`/inspect/api/traces/${traceIds[2]}/raw?body=secrets`)).status).toBe(400);
  });

  test("against the previous request of the session: what the client added to its own history", async () => {
    const previous = (await api(`/inspect/api/traces/${traceIds[2]}/previous`)).body as Json;
    expect(previous.previous.id).toBe(traceIds[1]);
    expect(previous.by).toBe("session");
    const added = previous.pairing.rows.filter((row: Json) => row.change === "added");
    expect(added.map((row: Json) => row.right.path)).toEqual([
      "messages[3].content[0]",
      "messages[3].content[1]",
      "messages[4].content[0]",
      "messages[5].content[0]",
      "messages[6].content[0]",
    ]);
    expect(previous.pairing.rows.filter((row: Json) => row.change === "removed")).toEqual([]);
    expect(((await api(`/inspect/api/traces/${traceIds[0]}/previous`)).body as Json).previous).toBeUndefined();
  });
});

describe("one conversation", () => {
  test("the stored messages turn by turn, each with the exchange that stored it", async () => {
    const created = await postJson(`${gateway.url}/v1/conversations`, {}, { "x-api-key": KEY });
    const id = (created.body as Json).id as string;
    const answer = (text: string) => ({
      kind: "json" as const,
      body: {
        id: "c",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 },
      },
    });
    upstream.enqueue(answer("Paris."), answer("About 2.1 million."));
    const turns: string[] = [];
    for (const question of ["Capital of France?", "Its population?"]) {
      const reply = await postJson(
        `${gateway.url}/v1/messages`,
        { model: "m", max_tokens: 50, messages: [{ role: "user", content: question }] },
        { "x-api-key": KEY, "x-parley-conversation-id": id },
      );
      expect(reply.status).toBe(200);
      turns.push((await traceOf(gateway, reply)).id);
    }
    const view = (await api(`/inspect/api/conversations/${id}`)).body as Json;
    expect(view.messages.map((message: Json) => [message.role, message.blocks[0].text, message.traceId])).toEqual([
      ["user", "Capital of France?", turns[0]],
      ["assistant", "Paris.", turns[0]],
      ["user", "Its population?", turns[1]],
      ["assistant", "About 2.1 million.", turns[1]],
    ]);
    expect(view.traces.map((trace: Json) => trace.id)).toEqual(turns);
    const listed = ((await api(`/inspect/api/traces?conversation=${id}`)).body as Json).traces;
    expect(listed.map((trace: Json) => trace.id)).toEqual([...turns].reverse());
    const previous = (await api(`/inspect/api/traces/${turns[1]}/previous`)).body as Json;
    expect(previous.by).toBe("conversation");
    expect(previous.previous.id).toBe(turns[0]);
    expect((await api(`/inspect/api/conversations/${id}`, OTHER_KEY)).status).toBe(404);
  });
});

describe("secrets stay out of every view", () => {
  test("a key the stored bodies hold apart (escaped, or split across stream chunks) is not put back together", async () => {
    const escapedKey = `\\u0073${KEY.slice(1)}`;
    const text = `{"model":"${SESSION_MODEL}","max_tokens":20,"stream":true,"messages":[{"role":"user","content":"my key is ${escapedKey}"}]}`;
    const chunk = (content: string, finish: string | null = null) => ({
      id: "c",
      object: "chat.completion.chunk",
      created: 1,
      model: "m",
      choices: [{ index: 0, delta: { content }, finish_reason: finish }],
    });
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([chunk("Yours is sk-pro"), chunk("j-Zq81Lm29Xk44Tb77"), chunk(".", "stop")]),
    });
    const reply = await postStream(`${gateway.url}/v1/messages`, JSON.parse(text.replace(escapedKey, KEY)), {
      "x-api-key": KEY,
    });
    expect(reply.status).toBe(200);
    // The client's own text, with its key \u-escaped, sent as it was typed.
    const sent = await request(`${gateway.url}/v1/messages`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": KEY },
      body: text,
    });
    await sent.body.text();
    upstream.enqueue({ kind: "sse", frames: openaiFrames([chunk("ok", "stop")]) });
    for (const replied of [reply, { headers: sent.headers as Json }]) {
      const trace = await traceOf(gateway, replied);
      const view = await api(`/inspect/api/traces/${trace.id}`);
      expect(view.status).toBe(200);
      expect(view.text).not.toContain(KEY.slice(3));
      expect(view.text).not.toContain("proj-Zq81Lm29Xk44Tb77");
    }
  });
});
