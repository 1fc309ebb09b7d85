import { describe, expect, it } from "vitest";
import { anthropicUpstream } from "./anthropic/upstream.js";
import { geminiUpstream } from "./gemini/upstream.js";
import { responsesUpstream } from "./openai-responses/upstream.js";

/** Each API's words for reasoning it cannot verify, as its servers answer (issue 31: fail soft, once). */
describe("isReasoningRefusal", () => {
  const cases: Array<[string, typeof anthropicUpstream, string]> = [
    [
      "Anthropic, a signature made for another key",
      anthropicUpstream,
      '{"type":"error","error":{"type":"invalid_request_error","message":"messages.1.content.0: Invalid `signature` in `thinking` block"}}',
    ],
    [
      "Anthropic, a block of the last turn changed",
      anthropicUpstream,
      '{"type":"error","error":{"type":"invalid_request_error","message":"messages.3.content.1: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be modified. These blocks must remain as they were in the original response."}}',
    ],
    [
      "OpenAI, sealed under another organisation",
      responsesUpstream,
      '{"error":{"message":"The encrypted content for item rs_1 could not be verified.","type":"invalid_request_error","param":null,"code":"invalid_encrypted_content"}}',
    ],
    [
      "Gemini, a call without its signature",
      geminiUpstream,
      '{"error":{"code":400,"message":"Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly.","status":"INVALID_ARGUMENT"}}',
    ],
    [
      "Gemini, a signature it cannot read",
      geminiUpstream,
      '{"error":{"code":400,"message":"Thought signature is not valid.","status":"INVALID_ARGUMENT"}}',
    ],
  ];
  it.each(cases)("%s", (_name, upstream, body) => {
    expect(upstream.isReasoningRefusal?.(400, body)).toBe(true);
    // Only a 400 is such a refusal.
    expect(upstream.isReasoningRefusal?.(500, body)).toBe(false);
  });

  it("other 400s are not", () => {
    for (const upstream of [anthropicUpstream, responsesUpstream, geminiUpstream]) {
      expect(upstream.isReasoningRefusal?.(400, '{"error":{"message":"max_tokens: too large"}}')).toBe(false);
    }
  });
});
