import fc from "fast-check";
import type { Json } from "../../src/formats/openai-responses/wire-types.js";

/** Arbitrary Responses input items, with what clients send: ids, statuses, unknown fields, odd arguments. */

const text = fc.string({ unit: "grapheme", maxLength: 12 });
const id = (prefix: string) =>
  fc.option(fc.stringMatching(new RegExp(`^${prefix}_[a-z0-9]{1,6}$`)), { nil: undefined });
const status = fc.option(fc.constantFrom("completed", "in_progress", "incomplete"), { nil: undefined });

/** Drops the keys whose value is undefined, as JSON would. */
const defined = (item: Json): Json =>
  Object.fromEntries(Object.entries(item).filter(([, value]) => value !== undefined));

const inputPart = fc.oneof(
  fc.record({ type: fc.constant("input_text"), text }),
  fc.record({
    type: fc.constant("input_image"),
    image_url: fc.constantFrom("https://example.com/a.png", "data:image/png;base64,iVBORw0KGgo="),
    detail: fc.constantFrom("low", "high", "auto"),
  }),
  fc.record({
    type: fc.constant("input_file"),
    file_data: fc.constant("data:application/pdf;base64,JVBERi0="),
    filename: text,
  }),
);

const outputPart = fc.oneof(
  fc.record({ type: fc.constant("output_text"), text, annotations: fc.constant([]) }),
  fc.record({ type: fc.constant("refusal"), refusal: text }),
);

const inputMessage = fc
  .record({
    type: fc.option(fc.constant("message"), { nil: undefined }),
    id: id("msg"),
    role: fc.constantFrom("user", "system", "developer"),
    content: fc.oneof(text, fc.array(inputPart, { maxLength: 3 })),
  })
  .map(defined);

const assistantMessage = fc
  .record({
    type: fc.option(fc.constant("message"), { nil: undefined }),
    id: id("msg"),
    status,
    role: fc.constant("assistant"),
    content: fc.oneof(text, fc.array(outputPart, { maxLength: 3 })),
    phase: fc.option(fc.constantFrom("commentary", "final_answer"), { nil: undefined }),
  })
  .map(defined);

const functionCall = fc
  .record({
    type: fc.constant("function_call"),
    id: id("fc"),
    status,
    call_id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    name: fc.stringMatching(/^[a-z_]{1,8}$/),
    namespace: fc.option(fc.constantFrom("multi_agent_v1", "tools"), { nil: undefined }),
    arguments: fc.oneof(
      fc.jsonValue().map((value) => JSON.stringify(value)),
      fc.constantFrom('{"a": 1}', '{"cut": ', "not json", ""),
    ),
  })
  .map(defined);

const customCall = fc
  .record({
    type: fc.constant("custom_tool_call"),
    id: id("ctc"),
    call_id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    name: fc.constantFrom("apply_patch", "write_sql"),
    input: text,
  })
  .map(defined);

const output = fc
  .record({
    type: fc.constantFrom("function_call_output", "custom_tool_call_output"),
    id: id("fco"),
    call_id: fc.stringMatching(/^call_[a-z0-9]{1,6}$/),
    output: fc.oneof(text, fc.array(inputPart, { maxLength: 2 })),
  })
  .map(defined);

const reasoning = fc
  .record({
    type: fc.constant("reasoning"),
    id: fc.stringMatching(/^rs_[a-z0-9]{1,6}$/),
    summary: fc.array(fc.record({ type: fc.constant("summary_text"), text }), { maxLength: 3 }),
    content: fc.option(fc.array(fc.record({ type: fc.constant("reasoning_text"), text }), { maxLength: 2 }), {
      nil: undefined,
    }),
    encrypted_content: fc.option(fc.stringMatching(/^gAAAA[A-Za-z0-9_-]{0,12}$/), { nil: undefined }),
  })
  .map(defined);

const hosted = fc.record({
  type: fc.constantFrom("web_search_call", "file_search_call"),
  id: fc.stringMatching(/^ws_[a-z0-9]{1,6}$/),
  status: fc.constant("completed"),
});

export const responsesItem = fc.oneof(
  inputMessage,
  assistantMessage,
  functionCall,
  customCall,
  output,
  reasoning,
  hosted,
);
