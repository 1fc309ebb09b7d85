import { describe, expect, test } from "vitest";
import { REDACTED, redactBodyText, redactionTriggers, redactText, redactValue } from "./redact.js";

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

describe("the common credential shapes (docs/security.md lists them)", () => {
  // Made-up values in each provider's documented shape.
  const jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U";
  const pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAuQ8v1yq3\nAbCdEf==\n-----END RSA PRIVATE KEY-----";
  const cases: Array<[string, string, string]> = [
    ["a JWT", `session ${jwt} ok`, jwt],
    ["an AWS access key id", "aws AKIAIOSFODNN7EXAMPLE here", "IOSFODNN7EXAMPLE"],
    ["a Google API key", "key AIzaSyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe used", "SyDaGmWKa4JsXZ-HjGw7ISLn_3namBGewQe"],
    ["a GitHub token", "token ghp_16C7e42F292c6912E7710c838347Ae178B4a here", "16C7e42F292c6912E7710c838347Ae178B4a"],
    ["a fine-grained GitHub token", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuv", "11ABCDEFG0123456789_abc"],
    ["a Slack token", "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx", "123456789012-1234567890123"],
    ["a Stripe key", "sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"],
    ["a PEM private key", pem, "MIIEowIBAAKCAQEAuQ8v1yq3"],
  ];

  test.each(cases)("%s is replaced in plain text and in JSON text", (_name, text, secret) => {
    // The writer skips text its triggers say needs nothing: each shape must trip them.
    expect(redactionTriggers([]).words.test(JSON.stringify(text).toLowerCase())).toBe(true);
    expect(redactText(text)).not.toContain(secret);
    const body = JSON.stringify({ messages: [{ role: "user", content: text }] });
    expect(redactBodyText(body, [])).not.toContain(secret);
    expect(JSON.parse(redactBodyText(body, [])).messages[0].role).toBe("user");
  });

  test.each([
    "password",
    "db_password",
    "client_secret",
    "refresh_token",
    "token",
    "aws_secret_access_key",
    "private_key",
  ])("a string member named %s is replaced, in objects, JSON text and tool arguments", (name) => {
    const input = { [name]: "hunter2-value", query: "weather" };
    expect(redactValue(input)).toEqual({ [name]: REDACTED, query: "weather" });
    expect(JSON.parse(redactBodyText(JSON.stringify({ input }), [])).input).toEqual({
      [name]: REDACTED,
      query: "weather",
    });
    const chat = JSON.stringify({ function: { arguments: JSON.stringify(input) } });
    expect(redactBodyText(chat, [])).not.toContain("hunter2");
    expect(redactionTriggers([]).words.test(chat.toLowerCase())).toBe(true);
  });

  test("counts are not secrets: max_tokens, input_tokens and the like are left as they are", () => {
    const usage = { max_tokens: 100, usage: { input_tokens: 5, output_tokens: "7" }, tokenizer: "o200k" };
    expect(redactValue(usage)).toEqual(usage);
    expect(redactBodyText(JSON.stringify(usage), [])).toBe(JSON.stringify(usage));
    expect(redactionTriggers([]).words.test(JSON.stringify(usage).toLowerCase())).toBe(false);
  });
});
