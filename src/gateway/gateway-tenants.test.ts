import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getJson, type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import { DEFAULT_OWNER } from "../store/owner.js";
import type { RunningGateway } from "./server.js";

/**
 * Stored conversations belong to the key that created them, or to the tenant that key names: another key gets a
 * 404 on every conversation route and on a stateful turn, exactly as for an id that does not exist, and nothing
 * of the conversation reaches the upstream. (A conversation made with key A was read, appended to and continued
 * with key B.)
 */
let upstream: ScriptedUpstream;
let gateway: RunningGateway;

const answer = {
  id: "c",
  object: "chat.completion",
  created: 1,
  model: "m",
  choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
  usage: { prompt_tokens: 3, completion_tokens: 1, total_tokens: 4 },
};
const as = (key: string) => ({ "x-api-key": key });
const A = "key-alice-0001";
const B = "key-bob-0002";
const C = "key-carol-team-0003";
const D = "key-dave-team-0004";
const secretMessage = { role: "user", content: "my secret plan" };

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  upstream.fallback = () => ({ kind: "json", body: answer });
  gateway = await startTestGateway({
    providers: { local: { type: "openai", upstream } },
    file: {
      apiKeys: [A, B, { key: C, tenant: "team" }, { key: D, tenant: "team" }],
    },
  });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

async function create(key: string, id?: string): Promise<string> {
  const reply = await postJson(`${gateway.url}/v1/conversations`, id === undefined ? {} : { id }, as(key));
  expect(reply.status).toBe(201);
  const created = (reply.body as Json).id as string;
  const append = await postJson(
    `${gateway.url}/v1/conversations/${created}/messages`,
    { messages: [secretMessage] },
    as(key),
  );
  expect(append.status).toBe(200);
  return created;
}

function turn(key: string, id: string, stream = false) {
  return postJson(
    `${gateway.url}/v1/messages`,
    { model: "m", max_tokens: 16, stream, messages: [{ role: "user", content: "go on" }] },
    { ...as(key), "x-parley-conversation-id": id },
  );
}

describe("a conversation is its key's", () => {
  test("another key cannot read it, append to it or continue it: 404, as for an unknown id", async () => {
    const id = await create(A);
    const read = await getJson(`${gateway.url}/v1/conversations/${id}`, as(B));
    expect(read.status).toBe(404);
    expect(read.body).toMatchObject({ type: "error", error: { type: "not_found_error" } });
    expect(read.text).not.toContain("secret plan");
    const unknown = await getJson(`${gateway.url}/v1/conversations/no-such-id`, as(B));
    expect((unknown.body as Json).error.message.replace("no-such-id", id)).toBe((read.body as Json).error.message);
    const append = await postJson(
      `${gateway.url}/v1/conversations/${id}/messages`,
      { messages: [secretMessage] },
      as(B),
    );
    expect(append.status).toBe(404);
    const before = upstream.requests.length;
    const continued = await turn(B, id);
    expect(continued.status).toBe(404);
    expect(upstream.requests.length).toBe(before);

    const own = await getJson(`${gateway.url}/v1/conversations/${id}`, as(A));
    expect((own.body as Json).messages).toEqual([secretMessage]);
    expect((await turn(A, id)).status).toBe(200);
    expect(JSON.stringify(upstream.requests.at(-1)!.body)).toContain("my secret plan");
  });

  test("keys that name the same tenant share its conversations; other keys do not", async () => {
    const id = await create(C);
    expect((await getJson(`${gateway.url}/v1/conversations/${id}`, as(D))).status).toBe(200);
    expect((await turn(D, id)).status).toBe(200);
    upstream.enqueue({
      kind: "sse",
      frames: [
        `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta: { content: "streamed" }, finish_reason: "stop" }] })}\n\n`,
        "data: [DONE]\n\n",
      ],
    });
    const streamed = await turn(D, id, true);
    expect(streamed.text).toContain("message_stop");
    const stored = (await getJson(`${gateway.url}/v1/conversations/${id}`, as(C))).body as Json;
    expect(JSON.stringify(stored.messages.at(-1))).toContain("streamed");
    expect((await getJson(`${gateway.url}/v1/conversations/${id}`, as(A))).status).toBe(404);
  });

  test("an id another tenant holds cannot be taken: 409, and its content stays theirs", async () => {
    await create(A, "alice-named");
    const taken = await postJson(`${gateway.url}/v1/conversations`, { id: "alice-named" }, as(B));
    expect(taken.status).toBe(409);
    expect((await getJson(`${gateway.url}/v1/conversations/alice-named`, as(B))).status).toBe(404);
  });
});

describe("traces", () => {
  test("each carries its key's tenant, so that a key's own traces can be listed apart", async () => {
    const id = await create(C);
    const team = [(await turn(C, id)).headers["request-id"], (await turn(D, id)).headers["request-id"]];
    const alice = (await turn(A, await create(A))).headers["request-id"];
    const store = gateway.state.store!;
    const teamTraces = await eventually(async () => {
      const { traces } = await store.traces.list({ tenant: "team", limit: 100 });
      return team.every((requestId) => traces.some((trace) => trace.requestId === requestId)) ? traces : undefined;
    });
    expect(teamTraces.every((trace) => trace.tenant === "team")).toBe(true);
    expect(teamTraces.some((trace) => trace.requestId === alice)).toBe(false);
    const aliceTrace = await eventually(() => store.traces.get(String(alice)));
    // A key no entry names a tenant for is a tenant of its own, named after a digest of it, never the key.
    expect(aliceTrace.tenant).toMatch(/^key-[0-9a-f]{32}$/);
    expect(JSON.stringify(aliceTrace)).not.toContain(A);
  });
});

/** What `read` gives once it gives something: traces are written after the answer, off the request path. */
async function eventually<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error("not recorded in time");
}

describe("without keys", () => {
  test("the gateway has one user, who reaches every conversation", async () => {
    const single = await startTestGateway({ providers: { local: { type: "openai", upstream } } });
    try {
      const created = await postJson(`${single.url}/v1/conversations`, {});
      const id = (created.body as Json).id as string;
      expect((await getJson(`${single.url}/v1/conversations/${id}`)).status).toBe(200);
      expect((await getJson(`${single.url}/v1/conversations/${id}`, as("anything"))).status).toBe(200);
      const reply = await postJson(
        `${single.url}/v1/messages`,
        { model: "m", max_tokens: 16, messages: [{ role: "user", content: "go on" }] },
        { "x-parley-conversation-id": id },
      );
      expect(reply.status).toBe(200);
      const requestId = String(reply.headers["request-id"]);
      const trace = await eventually(() => single.state.store!.traces.get(requestId));
      expect(trace.tenant).toBe(DEFAULT_OWNER);
    } finally {
      await single.close();
    }
  });
});
