import { describe, expect, test } from "vitest";
import { errorTypeForStatus, InvalidRequestError, statusForErrorType } from "./errors.js";
import { fieldsFor } from "./extra.js";
import { formatPath } from "./lossy.js";
import { decodeOriginSignature, encodeOriginSignature, isOriginSignature } from "./reasoning-origin.js";

describe("reasoning origin envelope", () => {
  test("round-trips every field, details included", () => {
    const origin = {
      format: "openai" as const,
      provider: "deepseek",
      field: "reasoning_content" as const,
      model: "deepseek-v4",
      details: [{ type: "reasoning.encrypted", data: "xyz" }],
    };
    const signature = encodeOriginSignature(origin);
    expect(isOriginSignature(signature)).toBe(true);
    expect(decodeOriginSignature(signature)).toEqual(origin);
  });

  test("carries a Responses provider's item id and sealed reasoning, unmodified", () => {
    const origin = {
      format: "responses" as const,
      provider: "openai",
      field: "summary" as const,
      id: "rs_0f35",
      sealed: "gAAAAABpPMlc_+/==",
    };
    expect(decodeOriginSignature(encodeOriginSignature(origin))).toEqual(origin);
  });

  test("keeps a provider's signature (s) and sealed reasoning (e) side by side, with the item id (i)", () => {
    const origin = {
      format: "anthropic" as const,
      provider: "deepseek",
      field: "thinking" as const,
      signature: "deepseek-sig",
      id: "rs_1",
      sealed: "sealed-content",
    };
    const signature = encodeOriginSignature(origin);
    const payload = JSON.parse(Buffer.from(signature.slice("parley.v1.".length), "base64url").toString("utf8"));
    expect(payload).toEqual({
      f: "anthropic",
      p: "deepseek",
      r: "thinking",
      s: "deepseek-sig",
      i: "rs_1",
      e: "sealed-content",
    });
    expect(decodeOriginSignature(signature)).toEqual(origin);
  });

  test("leaves real Anthropic signatures and garbage alone", () => {
    expect(decodeOriginSignature("EqQBCgIYAh")).toBeUndefined();
    expect(decodeOriginSignature("parley.v1.!!!")).toBeUndefined();
    expect(decodeOriginSignature(undefined)).toBeUndefined();
    expect(isOriginSignature("EqQBCgIYAh")).toBe(false);
  });
});

describe("errors", () => {
  test("status and type tables agree with Anthropic's", () => {
    expect(errorTypeForStatus(429)).toBe("rate_limit_error");
    expect(errorTypeForStatus(529)).toBe("overloaded_error");
    expect(errorTypeForStatus(503)).toBe("overloaded_error");
    expect(errorTypeForStatus(422)).toBe("invalid_request_error");
    expect(errorTypeForStatus(502)).toBe("api_error");
    expect(statusForErrorType("request_too_large")).toBe(413);
  });

  test("an invalid request names its path", () => {
    const error = new InvalidRequestError("must be a string", formatPath(["messages", 5, "content", 3, "text"]));
    expect(error.message).toBe("messages[5].content[3].text: must be a string");
    expect(error.status).toBe(400);
  });
});

describe("keyed extras", () => {
  test("a format's form records ($-keys) reach no other format and are not reported; its own target gets them", () => {
    const extra = {
      responses: { $type: "message", $id: "msg_1", prompt_cache_key: "k", strict: true },
      anthropic: { cache_control: { type: "ephemeral" } },
    };
    const shares = (key: string) => key === "strict";
    const toChat = fieldsFor(extra, "openai", shares);
    expect(toChat.fields).toEqual({ strict: true });
    expect(toChat.dropped.map(({ from, key }) => `${from}.${key}`)).toEqual([
      "responses.prompt_cache_key",
      "anthropic.cache_control",
    ]);
    expect(fieldsFor(extra, "responses").fields).toBe(extra.responses);
  });
});
