import fc from "fast-check";
import type { Message, Part } from "../../core/index.js";

const text = fc.string({ unit: "binary", maxLength: 30 });
const partArbitrary: fc.Arbitrary<Part> = fc.oneof(
  fc.record({ type: fc.constant("text" as const), text }),
  fc.record(
    { type: fc.constant("thinking" as const), thinking: text, signature: fc.string({ minLength: 1, maxLength: 20 }) },
    { requiredKeys: ["type", "thinking"] },
  ),
  fc.record({
    type: fc.constant("tool_call" as const),
    id: fc.string({ minLength: 1, maxLength: 10 }),
    name: fc.string({ minLength: 1, maxLength: 10 }),
    input: fc.jsonValue({ maxDepth: 3 }),
  }),
  fc.record(
    {
      type: fc.constant("tool_result" as const),
      toolCallId: fc.string({ maxLength: 10 }),
      content: text,
      isError: fc.boolean(),
    },
    { requiredKeys: ["type", "toolCallId", "content"] },
  ),
);
/** Messages of every role with parts, shorthand and extra fields, for the store's property tests. */
export const messageArbitrary: fc.Arbitrary<Message> = fc.record(
  {
    role: fc.constantFrom("system" as const, "user" as const, "assistant" as const),
    parts: fc.array(partArbitrary, { maxLength: 4 }),
    textShorthand: fc.boolean(),
    // keyed by the format the fields came from
    extra: fc.record(
      {
        anthropic: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
        openai: fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 2 }),
      },
      { requiredKeys: [] },
    ),
  },
  { requiredKeys: ["role", "parts"] },
);
