import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { encodeOriginSignature, type Message, type Part } from "../core/index.js";
import type { RepairTarget } from "./history.js";
import { repair, validateFor } from "./pipeline.js";
import { anthropicTarget, openaiTarget } from "./test-support/targets.js";

const ids = ["toolu_1", "toolu_2", "toolu_3", "toolu_4", "toolu_5"];
const id = fc.constantFrom(...ids);
const words = fc.constantFrom("alpha", "beta", "gamma", "delta", "é ☃ 😀", "two\nlines");
const text = fc.oneof(
  { weight: 8, arbitrary: fc.tuple(words, fc.nat(999)).map(([word, n]) => `${word} ${n}`) },
  { weight: 1, arbitrary: fc.constantFrom("", " ", "\n\t") },
);
const signature = fc.oneof(
  fc.stringMatching(/^E[A-Za-z0-9+/]{12,24}$/),
  fc.constant(""),
  fc.constant(encodeOriginSignature({ format: "openai", provider: "deepseek", field: "reasoning_content" })),
);

const textPart = text.map((value): Part => ({ type: "text", text: value }));
const thinkingPart = fc
  .tuple(text, fc.option(signature, { nil: undefined }))
  .map(
    ([thinking, sig]): Part =>
      sig === undefined ? { type: "thinking", thinking } : { type: "thinking", thinking, signature: sig },
  );
const redactedPart = fc
  .stringMatching(/^[A-Za-z0-9]{8,16}$/)
  .map((data): Part => ({ type: "redacted_thinking", data }));
const callPart = fc
  .tuple(id, words)
  .map(([callId, word]): Part => ({ type: "tool_call", id: callId, name: "run", input: { word } }));
const resultPart = fc
  .tuple(id, text, fc.boolean())
  .map(
    ([callId, content, isError]): Part =>
      isError
        ? { type: "tool_result", toolCallId: callId, content, isError }
        : { type: "tool_result", toolCallId: callId, content },
  );

const assistantMessage = fc
  .array(
    fc.oneof(
      { weight: 3, arbitrary: thinkingPart },
      { weight: 1, arbitrary: redactedPart },
      { weight: 3, arbitrary: textPart },
      { weight: 3, arbitrary: callPart },
      { weight: 1, arbitrary: resultPart },
    ),
    { maxLength: 5 },
  )
  .map((parts): Message => ({ role: "assistant", parts }));
const userMessage = fc
  .array(
    fc.oneof(
      { weight: 4, arbitrary: textPart },
      { weight: 4, arbitrary: resultPart },
      { weight: 1, arbitrary: thinkingPart },
      { weight: 1, arbitrary: callPart },
    ),
    { maxLength: 4 },
  )
  .map((parts): Message => ({ role: "user", parts }));
const systemMessage = textPart.map((part): Message => ({ role: "system", parts: [part] }));

/** Random interleavings of roles and blocks, with missing results, orphans and duplicated messages. */
const history = fc
  .array(
    fc.oneof(
      { weight: 5, arbitrary: userMessage },
      { weight: 5, arbitrary: assistantMessage },
      { weight: 1, arbitrary: systemMessage },
    ),
    { maxLength: 12 },
  )
  .chain((messages) =>
    fc.array(fc.nat(Math.max(0, messages.length - 1)), { maxLength: 2 }).map((duplicates) => {
      const out = [...messages];
      for (const index of duplicates) if (messages[index]) out.splice(index, 0, messages[index]);
      return out;
    }),
  );

const target = fc.oneof(
  fc.constant<RepairTarget>(anthropicTarget),
  fc
    .record({ strictToolMessageOrder: fc.boolean(), requiresReasoningOnToolCallTurns: fc.boolean() })
    .map((compat): RepairTarget => openaiTarget(compat)),
);

/** The generator's real-looking Anthropic signatures start with "E"; envelopes start with "parley.". */
function isAnthropicSigned(signature: string | undefined): boolean {
  return signature?.startsWith("E") ?? false;
}

function allParts(messages: Message[]): Part[] {
  return messages.flatMap((message) => message.parts);
}

describe("repair on random histories", () => {
  test("the result passes the validator, and a second repair changes nothing", () => {
    fc.assert(
      fc.property(history, target, (messages, repairTarget) => {
        const snapshot = structuredClone(messages);
        const once = repair(messages, repairTarget);
        expect(messages).toEqual(snapshot);
        expect(validateFor(once.messages, repairTarget)).toEqual([]);
        const twice = repair(once.messages, repairTarget);
        expect(twice.report).toEqual([]);
        expect(twice.messages).toBe(once.messages);
        if (once.report.length === 0) expect(once.messages).toBe(messages);
        for (const entry of once.report) expect(entry.messageIndex).toBeLessThan(messages.length);
      }),
      { numRuns: 500 },
    );
  });

  test("every text, tool call and thinking of the input is still there, as itself or as text", () => {
    fc.assert(
      fc.property(history, target, (messages, repairTarget) => {
        const { messages: output, report } = repair(messages, repairTarget);
        const parts = new Set(allParts(output));
        const texts = allParts(output).flatMap((part) => {
          if (part.type === "text") return [part.text];
          if (part.type === "thinking") return [part.thinking];
          if (part.type === "tool_result" && typeof part.content === "string") return [part.content];
          return [];
        });
        const present = (value: string) => value.trim() === "" || texts.some((candidate) => candidate.includes(value));
        // OpenAI-compatible APIs cannot take redacted thinking: a message of nothing else goes, reported.
        const removedForOpenAI =
          repairTarget.emptiness === "no-content" && report.some((entry) => entry.action === "removed-empty-message");
        // A call may come back renamed (a repeated id), and its result with it: the same part, another id.
        const renamed = (part: Part) =>
          allParts(output).some((other) =>
            other.type === "tool_call" && part.type === "tool_call"
              ? other.id.startsWith(part.id) && other.name === part.name && other.input === part.input
              : other.type === "tool_result" &&
                part.type === "tool_result" &&
                other.toolCallId.startsWith(part.toolCallId) &&
                other.content === part.content,
          );
        for (const part of allParts(messages)) {
          if (part.type === "text") expect(present(part.text)).toBe(true);
          if (part.type === "thinking") expect(parts.has(part) || present(part.thinking)).toBe(true);
          if (part.type === "redacted_thinking") expect(parts.has(part) || removedForOpenAI).toBe(true);
          if (part.type === "tool_call")
            expect(parts.has(part) || renamed(part) || present(`[tool call ${part.id}: run`)).toBe(true);
          if (part.type === "tool_result")
            expect(parts.has(part) || renamed(part) || present(`[tool result for ${part.toolCallId}`)).toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });

  test("the last assistant message's signed thinking and redacted thinking come back byte-identical, in order", () => {
    fc.assert(
      fc.property(history, (messages) => {
        const kept = (message: Message | undefined) =>
          (message?.parts ?? []).filter(
            (part) =>
              part.type === "redacted_thinking" || (part.type === "thinking" && isAnthropicSigned(part.signature)),
          );
        const lastAssistant = (list: Message[]) => list.findLast((message) => message.role === "assistant");
        const before = kept(lastAssistant(messages));
        const after = kept(lastAssistant(repair(messages, anthropicTarget).messages));
        expect(after.slice(after.length - before.length)).toEqual(before);
        for (const [index, part] of before.entries()) expect(after[after.length - before.length + index]).toBe(part);
      }),
      { numRuns: 500 },
    );
  });
});
