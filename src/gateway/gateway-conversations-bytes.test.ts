import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { getJson, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Invariant 12 at the HTTP surface: what a client appended to a conversation reads back byte for byte, its key
 * order, spacing, numbers and escapes, and the fields the canonical model does not name (`name` on a message;
 * `annotations`, `provider`, `detail` on a text block; `reasoning` on a tool_use), which converting back from
 * the canonical model would reorder or leave out.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({ providers: { local: { type: "openai", upstream, preset: "generic" } } });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

/** Messages as a client wrote them, each its own text. */
const sent = [
  '{"content":"Weather in Paris?","role":"user","name":"alice"}',
  `{
    "role": "assistant",
    "content": [
      {"text":"Checking caf\\u00e9 weather.","type":"text","annotations":[{"type":"url_citation","url":"https://example.org"}],"provider":"openrouter","detail":"low"},
      {"type":"tool_use","id":"toolu_1","name":"weather","input":{"city":"Paris","days":1.0},"reasoning":"needs data"}
    ]
  }`,
  '{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18°C","is_error":false}]}',
];

const create = async () => (await postJson(`${gateway.url}/v1/conversations`, {})).body as { id: string };
const messagesText = (texts: string[]) => `[${texts.join(",")}]`;

describe("a conversation reads back as the client appended it", () => {
  test("byte for byte, appended in one call or one message at a time", async () => {
    const all = await create();
    const appended = await postJson(
      `${gateway.url}/v1/conversations/${all.id}/messages`,
      `{"messages": ${messagesText(sent)}}`,
    );
    expect(appended.status).toBe(200);
    const one = await create();
    for (const message of sent) {
      const reply = await postJson(`${gateway.url}/v1/conversations/${one.id}/messages`, `{"messages":[${message}]}`);
      expect(reply.status).toBe(200);
    }
    for (const id of [all.id, one.id]) {
      const reply = await getJson(`${gateway.url}/v1/conversations/${id}`);
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(`{"id":${JSON.stringify(id)},"messages":${messagesText(sent)}}`);
      expect((reply.body as { messages: unknown[] }).messages).toEqual(sent.map((text) => JSON.parse(text)));
    }
  });

  test("a stateful turn keeps the client's message as sent, and the answer Parley stored is converted", async () => {
    const { id } = await create();
    upstream.enqueue({
      kind: "json",
      body: {
        id: "chatcmpl-1",
        object: "chat.completion",
        created: 1,
        model: "m",
        choices: [{ index: 0, message: { role: "assistant", content: "Sunny." }, finish_reason: "stop" }],
      },
    });
    const question = '{ "content" : [{"type":"text","text":"Weather?","provider":"x"}], "role":"user" }';
    const reply = await postJson(
      `${gateway.url}/v1/messages`,
      `{"model":"m","max_tokens":64,"messages":[${question}]}`,
      { "x-parley-conversation-id": id },
    );
    expect(reply.status).toBe(200);
    const read = await getJson(`${gateway.url}/v1/conversations/${id}`);
    expect(read.text).toBe(
      `{"id":${JSON.stringify(id)},"messages":[${question},{"role":"assistant","content":[{"type":"text","text":"Sunny."}]}]}`,
    );
  });
});
