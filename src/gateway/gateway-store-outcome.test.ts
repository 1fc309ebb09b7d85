import { afterAll, afterEach, beforeAll, expect, test } from "vitest";
import { postJson, postStream, startTestGateway } from "../../test/support/gateway-harness.js";
import { openaiFrames, type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * What the client is told is what was kept (contract invariant 17): a stored turn whose answer the store could not
 * keep whole never ends as a success, streamed or not, and what was kept stays marked incomplete.
 */

let upstream: ScriptedUpstream;
let gateway: RunningGateway;

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({ providers: { local: { type: "openai", upstream } } });
});

afterAll(async () => {
  await gateway.close();
  await upstream.close();
});

const conversations = () => gateway.state.store!.conversations;
const original = { startMessage: undefined as unknown, append: undefined as unknown };

afterEach(() => {
  const store = conversations() as unknown as Record<string, unknown>;
  if (original.startMessage !== undefined) store.startMessage = original.startMessage;
  if (original.append !== undefined) store.append = original.append;
  original.startMessage = undefined;
  original.append = undefined;
});

/** The store's streaming writer fails its last write, as a database that went away mid-answer does. */
function failCompletion(): void {
  const store = conversations();
  const startMessage = store.startMessage.bind(store);
  original.startMessage = store.startMessage;
  store.startMessage = async (...args: Parameters<typeof store.startMessage>) => {
    const writer = await startMessage(...args);
    return {
      get seq() {
        return writer.seq;
      },
      push: (event) => writer.push(event),
      flush: () => writer.flush(),
      abort: () => writer.abort(),
      complete: async () => {
        await writer.abort();
        throw new Error("connection terminated unexpectedly");
      },
    };
  };
}

const chunk = (delta: object, finish: string | null = null) => ({
  id: "c",
  object: "chat.completion.chunk",
  created: 1,
  model: "m",
  choices: [{ index: 0, delta, finish_reason: finish }],
});

const turn = (stream: boolean) => ({
  model: "m",
  max_tokens: 50,
  stream,
  messages: [{ role: "user", content: "Tell me a story." }],
});

test("a streamed stored turn whose answer the store could not keep ends with an error event, not message_stop", async () => {
  const { id } = await conversations().create();
  failCompletion();
  upstream.enqueue({
    kind: "sse",
    frames: openaiFrames([chunk({ role: "assistant", content: "Once upon" }), chunk({ content: " a time." }, "stop")]),
  });
  const reply = await postStream(`${gateway.url}/v1/messages`, turn(true), { "x-parley-conversation-id": id });
  expect(reply.status).toBe(200);
  const types = reply.events.map((event) => event.event);
  expect(types).toContain("error");
  expect(types).not.toContain("message_stop");
  expect(reply.text).toContain("not kept whole");
  const stored = await conversations().load(id);
  expect(stored?.at(-1)?.message.role).toBe("assistant");
  expect(stored?.at(-1)?.complete).toBe(false);
});

test("a streamed Responses answer kept with store: true that could not be kept ends response.failed, not completed", async () => {
  const answers = gateway.state.store!.answers;
  const save = answers.save.bind(answers);
  answers.save = async () => {
    throw new Error("database is locked");
  };
  try {
    upstream.enqueue({
      kind: "sse",
      frames: openaiFrames([
        chunk({ role: "assistant", content: "Once upon" }),
        chunk({ content: " a time." }, "stop"),
      ]),
    });
    const reply = await postStream(`${gateway.url}/v1/responses`, {
      model: "m",
      stream: true,
      store: true,
      input: "Tell me a story.",
    });
    expect(reply.status).toBe(200);
    const types = reply.events.map((event) => event.event);
    expect(types).not.toContain("response.completed");
    expect(types).toContain("error");
    expect(reply.text).toContain("not kept whole");
  } finally {
    answers.save = save;
  }
});

test("a whole stored turn whose answer the store could not keep is an error status, not the answer", async () => {
  const { id } = await conversations().create();
  const store = conversations();
  original.append = store.append;
  store.append = async () => {
    throw new Error("connection terminated unexpectedly");
  };
  upstream.enqueue({
    kind: "json",
    body: {
      id: "c",
      object: "chat.completion",
      created: 1,
      model: "m",
      choices: [{ index: 0, message: { role: "assistant", content: "Once upon a time." }, finish_reason: "stop" }],
      usage: { prompt_tokens: 5, completion_tokens: 5, total_tokens: 10 },
    },
  });
  const reply = await postJson(`${gateway.url}/v1/messages`, turn(false), { "x-parley-conversation-id": id });
  expect(reply.status).toBeGreaterThanOrEqual(500);
  expect(reply.text).not.toContain("Once upon a time.");
});
