import { describe, expect, test } from "vitest";
import type { ConversationRequest } from "../../core/index.js";
import { openaiChatUpstream } from "./upstream.js";

/** A server on a port no preset is guessed from names itself in its model list (`owned_by`). */

const request: ConversationRequest = {
  model: "m",
  messages: [{ role: "user", parts: [{ type: "text", text: "hi" }] }],
  tools: [
    { name: "weather", inputSchema: { type: "object" } },
    { name: "clock", inputSchema: { type: "object" } },
  ],
  toolChoice: { type: "tool", name: "clock" },
  thinking: { type: "disabled" },
};

function connect(preset?: string) {
  return openaiChatUpstream.connect({
    name: "local",
    baseUrl: "http://127.0.0.1:39123/v1",
    compat: {},
    headers: {},
    ...(preset === undefined ? {} : { preset }),
  });
}

describe("a guessed preset and the server's own word", () => {
  test("llama.cpp's `owned_by: llamacpp` turns the generic guess into the llamacpp preset", () => {
    const connection = connect();
    expect(connection.modelFacts?.preset).toBe("generic");
    expect(connection.encodeRequest(request).value).toMatchObject({
      tool_choice: { type: "function", function: { name: "clock" } },
    });
    connection.recogniseServer?.(["llamacpp"]);
    expect(connection.modelFacts?.preset).toBe("llamacpp");
    const sent = connection.encodeRequest(request).value as Record<string, unknown>;
    expect(sent).toMatchObject({ tool_choice: "required", chat_template_kwargs: { enable_thinking: false } });
    expect((sent.tools as unknown[]).length).toBe(1);
  });

  test("a configured preset stays, and an owner no rule names changes nothing", () => {
    const configured = connect("vllm");
    configured.recogniseServer?.(["llamacpp"]);
    expect(configured.modelFacts?.preset).toBe("vllm");
    const guessed = connect();
    guessed.recogniseServer?.(["organization_owner", "library"]);
    expect(guessed.modelFacts?.preset).toBe("generic");
  });
});
