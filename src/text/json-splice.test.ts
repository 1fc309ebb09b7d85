import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { replaceTopLevelString, topLevelArrayElements } from "./json-splice.js";

describe("replaceTopLevelString", () => {
  test("renames the top-level model and keeps every other byte: numbers, escapes, key order, spacing", () => {
    const text =
      '{ "max_tokens" : 1.0,"model":"claude-opus-5-5",\n "messages":[{"role":"user","content":"caf\\u00e9 \\"model\\"","model":"x"}],"n":12345678901234567890}';
    const out = replaceTopLevelString(text, "model", "qwen3");
    expect(out).toBe(text.replace('"claude-opus-5-5"', '"qwen3"'));
  });

  test("not an object, no such key, or a key whose value is not a string: undefined", () => {
    expect(replaceTopLevelString('["model","x"]', "model", "y")).toBeUndefined();
    expect(replaceTopLevelString('{"messages":[]}', "model", "y")).toBeUndefined();
    expect(replaceTopLevelString('{"model":null}', "model", "y")).toBeUndefined();
    expect(replaceTopLevelString('{"a":{"model":"x"}}', "model", "y")).toBeUndefined();
  });

  test("a key written with escapes is still the key", () => {
    expect(replaceTopLevelString('{"mod\\u0065l":"a"}', "model", "b")).toBe('{"mod\\u0065l":"b"}');
  });

  test("property: the result parses to the body with the model renamed, and only the model's bytes changed", () => {
    const key = fc.string({ maxLength: 6 }).filter((name) => name !== "model");
    const body = fc.dictionary(key, fc.jsonValue({ maxDepth: 3 }), { maxKeys: 5 });
    fc.assert(
      fc.property(body, fc.string(), fc.string(), fc.nat(3), fc.nat(5), (rest, from, to, space, position) => {
        const entries = Object.entries(rest);
        entries.splice(position % (entries.length + 1), 0, ["model", from]);
        const text = JSON.stringify(Object.fromEntries(entries), null, space);
        const out = replaceTopLevelString(text, "model", to)!;
        expect(JSON.parse(out)).toEqual({ ...JSON.parse(text), model: to });
        // Outside the model's value the two texts are the same.
        let prefix = 0;
        while (prefix < out.length && out[prefix] === text[prefix]) prefix++;
        let suffix = 0;
        while (suffix < out.length - prefix && out.at(-1 - suffix) === text.at(-1 - suffix)) suffix++;
        const changed = text.slice(prefix, text.length - suffix);
        expect(JSON.stringify(from).includes(changed) || changed === "").toBe(true);
      }),
    );
  });
});

describe("topLevelArrayElements", () => {
  test("gives each element's text as sent; the last of a duplicated key counts", () => {
    const text =
      '{"messages":[1],"model":"m", "messages" : [ {"content":"caf\\u00e9","role":"user", "n":1.0} ,\n"x", [ ] ,null]}';
    expect(topLevelArrayElements(text, "messages")).toEqual([
      '{"content":"caf\\u00e9","role":"user", "n":1.0}',
      '"x"',
      "[ ]",
      "null",
    ]);
    expect(topLevelArrayElements('{"messages":[]}', "messages")).toEqual([]);
  });

  test("no such key, a value that is not an array, or not an object: undefined", () => {
    expect(topLevelArrayElements('{"model":"m"}', "messages")).toBeUndefined();
    expect(topLevelArrayElements('{"messages":{}}', "messages")).toBeUndefined();
    expect(topLevelArrayElements('[{"messages":[]}]', "messages")).toBeUndefined();
    expect(topLevelArrayElements('{"a":{"messages":[1]}}', "messages")).toBeUndefined();
  });

  test("property: the elements parse to the array's elements and are the body's own text", () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue({ maxDepth: 3 }), { maxLength: 5 }), fc.nat(3), (messages, space) => {
        const text = JSON.stringify({ model: "m", messages, max_tokens: 1 }, null, space);
        const elements = topLevelArrayElements(text, "messages")!;
        expect(elements.map((element) => JSON.parse(element))).toEqual(JSON.parse(text).messages);
        for (const element of elements) expect(text).toContain(element);
      }),
    );
  });
});
