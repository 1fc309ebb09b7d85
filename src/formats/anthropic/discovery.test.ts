import { describe, expect, test } from "vitest";
import { anthropicAdapter } from "./adapter.js";

const connect = (baseUrl: string) =>
  anthropicAdapter.upstream.connect({
    name: "anthropic",
    baseUrl,
    apiKey: "sk-upstream",
    anthropicVersion: "2023-06-01",
    compat: {},
    headers: { "x-extra": "1" },
  });

describe("an Anthropic provider's model list", () => {
  test("is Anthropic's Models API beside its messages, with its key and version headers", () => {
    for (const baseUrl of ["https://api.anthropic.com", "https://api.anthropic.com/v1"]) {
      expect(connect(baseUrl).discovery).toEqual({
        url: "https://api.anthropic.com/v1/models",
        headers: { "x-extra": "1", "x-api-key": "sk-upstream", "anthropic-version": "2023-06-01" },
      });
    }
  });

  test("a provider without a key sends none", () => {
    const connection = anthropicAdapter.upstream.connect({ name: "a", baseUrl: "http://h", compat: {}, headers: {} });
    expect(connection.discovery.headers).toEqual({ "anthropic-version": "2023-06-01" });
  });

  test("its providers take a client's model names as sent", () => {
    expect(anthropicAdapter.upstream.takesClientModelNames).toBe(true);
  });

  test("a thread continued is refused in Anthropic's words; a whole conversation is not", () => {
    const continued = { thread: { type: "continue", previous_message_id: "msg_1" } };
    expect(anthropicAdapter.client.continuesHeldHistory?.(continued, "deepseek")).toMatchObject({
      type: "not_found_error",
      details: { error_code: "thread_not_found" },
    });
    expect(anthropicAdapter.client.continuesHeldHistory?.({ thread: { type: "create" } }, "deepseek")).toBeUndefined();
    expect(anthropicAdapter.client.continuesHeldHistory?.({}, "deepseek")).toBeUndefined();
  });
});
