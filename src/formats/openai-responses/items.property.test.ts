import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { responsesItem } from "../../../test/support/responses-arbitraries.js";
import { repair } from "../../repair/index.js";
import { formatAdapter } from "../registry.js";

/**
 * Any Responses history reads into the core and writes back as it came: items in order, their ids, statuses and
 * unknown fields, a call's arguments byte for byte, reasoning items whole, consecutive assistant items split back
 * where they were.
 */
const history = formatAdapter("responses").history;

describe("Responses items through the core", () => {
  test("any history reads into the core and writes back as it came", () => {
    fc.assert(
      fc.property(fc.array(responsesItem, { maxLength: 10 }), (items) => {
        const core = history.toCore(items);
        expect(history.fromCore(core.messages).value).toEqual(items);
      }),
      { numRuns: 400 },
    );
  });
});

describe("any Responses request", () => {
  const tool = fc.oneof(
    fc.constant({ type: "function", name: "f", parameters: { type: "object" }, strict: true }),
    fc.constant({
      type: "custom",
      name: "apply_patch",
      format: { type: "grammar", syntax: "lark", definition: "start: /.+/" },
    }),
    fc.constant({ type: "namespace", name: "ns", tools: [{ type: "function", name: "g", parameters: {} }] }),
    fc.constant({ type: "web_search" }),
  );
  const request = fc.record({
    model: fc.constant("m"),
    input: fc.array(responsesItem, { maxLength: 8 }),
    instructions: fc.option(fc.string({ maxLength: 8 }), { nil: undefined }),
    tools: fc.option(fc.array(tool, { maxLength: 4 }), { nil: undefined }),
    reasoning: fc.option(
      fc.record({ summary: fc.constantFrom("auto", "detailed"), effort: fc.constantFrom("low", "high") }),
      {
        nil: undefined,
      },
    ),
    max_output_tokens: fc.option(fc.integer({ min: 16, max: 64000 }), { nil: undefined }),
  });

  test("goes to a provider of every API without an exception: what cannot go is reported", () => {
    const providers = (["openai", "anthropic", "openai-responses"] as const).map((type) => {
      const adapter = [formatAdapter("openai"), formatAdapter("anthropic"), formatAdapter("responses")].find(
        (format) => format.upstream.type === type,
      )!;
      return adapter.upstream.connect({ name: "p", baseUrl: "http://127.0.0.1:9/v1", compat: {}, headers: {} });
    });
    fc.assert(
      fc.property(request, (body) => {
        const read = formatAdapter("responses").client.readRequest(JSON.parse(JSON.stringify(body)));
        for (const connection of providers) {
          const repaired = repair(read.value.messages, connection.repairTarget);
          const out = connection.encodeRequest({ ...read.value, messages: repaired.messages });
          expect(JSON.parse(JSON.stringify(out.value))).toBeTypeOf("object");
        }
      }),
      { numRuns: 300 },
    );
  });
});
