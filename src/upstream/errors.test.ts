import { describe, expect, test } from "vitest";
import {
  parseRetryAfter,
  redactSecrets,
  upstreamErrorForFailure,
  upstreamErrorForStatus,
  upstreamMessage,
} from "./errors.js";
import { DEFAULT_RETRY_POLICY, retryDelay } from "./retry.js";

describe("upstream error mapping", () => {
  test.each([
    [429, "rate_limit_error", 429, true],
    [529, "overloaded_error", 529, true],
    [503, "overloaded_error", 529, true],
    [401, "api_error", 500, false],
    [403, "api_error", 500, false],
    [400, "invalid_request_error", 400, false],
    [422, "invalid_request_error", 400, false],
    [404, "not_found_error", 404, false],
    [500, "api_error", 500, true],
    [502, "api_error", 500, true],
  ])("status %i -> %s (%i), retryable %s", (status, type, clientStatus, retryable) => {
    const error = upstreamErrorForStatus(status, JSON.stringify({ error: { message: "boom" } }));
    expect(error.type).toBe(type);
    expect(error.status).toBe(clientStatus);
    expect(error.retryable).toBe(retryable);
    expect(error.upstreamStatus).toBe(status);
    expect(error.message).toContain("boom");
  });

  test("an upstream 401 says it is the gateway's credentials, with the upstream's words", () => {
    const error = upstreamErrorForStatus(
      401,
      '{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}',
    );
    expect(error.message).toBe("upstream rejected the gateway's credentials (401): invalid x-api-key");
  });

  test("messages come out of OpenAI, Anthropic, Google's array, plain and empty bodies", () => {
    expect(upstreamMessage('{"error":{"message":"m1","type":"x"}}')).toBe("m1");
    expect(upstreamMessage('[{"error":{"code":400,"message":"m4","status":"INVALID_ARGUMENT"}}]')).toBe("m4");
    expect(upstreamMessage('{"type":"error","error":{"type":"overloaded_error","message":"m2"}}')).toBe("m2");
    expect(upstreamMessage('{"detail":"m3"}')).toBe("m3");
    expect(upstreamMessage("Bad Gateway")).toBe("Bad Gateway");
    expect(upstreamMessage("  ")).toBeUndefined();
  });

  test("secrets never survive into messages or bodies", () => {
    const key = "sk-upstream-secret-123";
    const error = upstreamErrorForStatus(401, `{"error":{"message":"Incorrect API key provided: ${key}"}}`, {
      secrets: [key],
    });
    expect(error.message).not.toContain(key);
    expect(error.body).not.toContain(key);
    expect(redactSecrets(`a ${key} b ${key}`, [key])).toBe("a [redacted] b [redacted]");
  });

  test("failures without a status map by their code", () => {
    const refused = Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:1"), { code: "ECONNREFUSED" });
    expect(upstreamErrorForFailure(refused)).toMatchObject({ type: "api_error", status: 502, retryable: true });
    const idle = Object.assign(new Error("Body Timeout Error"), { code: "UND_ERR_BODY_TIMEOUT" });
    expect(upstreamErrorForFailure(idle)).toMatchObject({ type: "timeout_error", status: 504, retryable: false });
    const nested = Object.assign(new Error("fetch failed"), { cause: { code: "UND_ERR_CONNECT_TIMEOUT" } });
    expect(upstreamErrorForFailure(nested).type).toBe("timeout_error");
  });
});

describe("Retry-After and backoff", () => {
  test("seconds, fractions and HTTP dates", () => {
    expect(parseRetryAfter("3")).toBe(3000);
    expect(parseRetryAfter("0.5")).toBe(500);
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:07 GMT", now)).toBe(7000);
    expect(parseRetryAfter("Wed, 31 Dec 2025 00:00:00 GMT", now)).toBe(0);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });

  test("backoff grows, stays within its bounds and stops after the last attempt", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxAttempts: 5, baseDelayMs: 100, maxDelayMs: 1000 };
    expect(retryDelay(policy, 1, undefined, () => 0)).toBe(50);
    expect(retryDelay(policy, 1, undefined, () => 1)).toBe(100);
    expect(retryDelay(policy, 3, undefined, () => 1)).toBe(400);
    expect(retryDelay(policy, 4, undefined, () => 1)).toBe(800);
    expect(retryDelay({ ...policy, maxAttempts: 9 }, 8, undefined, () => 1)).toBe(1000);
    expect(retryDelay(policy, 5, undefined)).toBeUndefined();
  });

  test("Retry-After wins, unless it is longer than the cap", () => {
    const policy = { ...DEFAULT_RETRY_POLICY, maxRetryAfterMs: 5000 };
    expect(retryDelay(policy, 1, 2000)).toBe(2000);
    expect(retryDelay(policy, 1, 60_000)).toBeUndefined();
  });
});

describe("a 500 that says the request is at fault", () => {
  test.each([
    "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
    "[json.exception.parse_error.101] parse error at line 1, column 2: syntax error while parsing object key",
  ])("llama.cpp's %j is a 400, never retried", (message) => {
    const body = JSON.stringify({ error: { code: 500, message, type: "server_error" } });
    const error = upstreamErrorForStatus(500, body);
    expect([error.type, error.status, error.retryable]).toEqual(["invalid_request_error", 400, false]);
    expect(error.message).toBe(`upstream: ${message}`);
  });

  test("any other 500 is still the server's, retried", () => {
    const body = JSON.stringify({ error: { code: 500, message: "failed to decode", type: "server_error" } });
    expect(upstreamErrorForStatus(500, body).retryable).toBe(true);
  });
});
