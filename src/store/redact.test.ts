import { describe, expect, test } from "vitest";
import { REDACTED, redactBodyText, redactText, redactValue } from "./redact.js";

describe("redaction", () => {
  test("replaces credential headers in objects and in [name, value] pairs, any case", () => {
    const headers = { Authorization: "Bearer x", "X-Api-Key": "abc", "api-key": "def", accept: "text/event-stream" };
    expect(
      redactValue({
        headers,
        list: [
          ["x-api-key", "abc"],
          ["accept", "*/*"],
        ],
      }),
    ).toEqual({
      headers: { Authorization: REDACTED, "X-Api-Key": REDACTED, "api-key": REDACTED, accept: "text/event-stream" },
      list: [
        ["x-api-key", REDACTED],
        ["accept", "*/*"],
      ],
    });
    expect(headers.Authorization).toBe("Bearer x");
  });

  test("replaces key-shaped values inside any text", () => {
    expect(
      redactText("curl -H 'Authorization: Bearer eyJhbGciOi.J9x' https://h/v1?key=AIzaSy123&x=1 sk-proj-abcdef123456"),
    ).toBe(`curl -H 'Authorization: Bearer ${REDACTED}' https://h/v1?key=${REDACTED}&x=1 sk-${REDACTED}`);
    expect(redactText("the task-list is short")).toBe("the task-list is short");
  });

  test("a credential member inside a JSON string (tool arguments in Chat Completions) is replaced as in an object", () => {
    const input = { api_key: 'ab"c\\d-42', "X-Api-Key": "k", query: "weather", apiKeys: "not a credential name" };
    const anthropic = JSON.stringify({ type: "tool_use", id: "toolu_1", name: "fetch", input });
    const chat = JSON.stringify({ type: "function", function: { name: "fetch", arguments: JSON.stringify(input) } });
    const expected = { api_key: REDACTED, "X-Api-Key": REDACTED, query: "weather", apiKeys: "not a credential name" };
    expect(JSON.parse(redactBodyText(anthropic, [])).input).toEqual(expected);
    const redacted = redactBodyText(chat, []);
    expect(redacted).not.toContain("42");
    expect(JSON.parse(JSON.parse(redacted).function.arguments)).toEqual(expected);
  });
});
