import { afterEach, describe, expect, it } from "vitest";
import { type Json, postJson, startTestGateway } from "../../test/support/gateway-harness.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../test/support/scripted-upstream.js";
import type { RunningGateway } from "./server.js";

/**
 * Reasoning in its own field for every client (issue 31): a Chat client (the OpenAI SDK, opencode) echoes the
 * reasoning an upstream of no known preset sent in `reasoning_content` or `reasoning` (a vLLM not on port 8000); it
 * goes back to that upstream in the field it came in, not as inline `<think>` text.
 */

let gateway: RunningGateway | undefined;
let upstream: ScriptedUpstream | undefined;

afterEach(async () => {
  await gateway?.close();
  await upstream?.close();
  gateway = undefined;
  upstream = undefined;
});

const done = {
  kind: "json" as const,
  body: {
    id: "c2",
    object: "chat.completion",
    model: "m",
    choices: [{ index: 0, message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
    usage: { prompt_tokens: 10, completion_tokens: 1, total_tokens: 11 },
  },
};

async function echoed(field: "reasoning_content" | "reasoning", reasoning?: "think-tags"): Promise<Json> {
  upstream = await startScriptedUpstream("openai");
  // A server that ignores what it does not know, as a vLLM of no known preset is taken to be here.
  upstream.server = undefined;
  gateway = await startTestGateway({
    providers: {
      local: { upstream, type: "openai", defaultModel: "m", ...(reasoning === undefined ? {} : { reasoning }) },
    },
  });
  upstream.enqueue(done);
  const reply = await postJson(`${gateway.url}/v1/chat/completions`, {
    model: "m",
    messages: [
      { role: "user", content: "Add 12 and 7." },
      { role: "assistant", content: "19", [field]: "12 plus 7 is 19." },
      { role: "user", content: "Double it." },
    ],
  });
  expect(reply.status).toBe(200);
  return (upstream.requests[0]!.body as Json).messages[1];
}

describe("a Chat client's reasoning field, on a provider without a preset", () => {
  it.each(["reasoning_content", "reasoning"] as const)("%s goes back in %s", async (field) => {
    const assistant = await echoed(field);
    expect(assistant[field]).toBe("12 plus 7 is 19.");
    expect(assistant.content).toBe("19");
  });

  it("a reasoning mode set for the provider still decides", async () => {
    const assistant = await echoed("reasoning_content", "think-tags");
    expect(assistant.reasoning_content).toBeUndefined();
    expect(assistant.content).toContain("<think>12 plus 7 is 19.</think>");
  });
});
