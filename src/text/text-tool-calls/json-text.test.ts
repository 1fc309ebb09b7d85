import fc from "fast-check";
import { expect, test } from "vitest";
import { cutAt } from "../../../test/support/cut.js";
import { findJsonEnd, JsonBalance, jsonArrayElementEnds, NOT_CLOSED, NOT_JSON, parseJsonObject } from "./json-text.js";

test("findJsonEnd skips brackets inside strings and escapes", () => {
  const text = ' {"a": "}]\\"{", "b": [1, {"c": 2}]} tail';
  expect(text.slice(0, findJsonEnd(text, 0))).toBe(' {"a": "}]\\"{", "b": [1, {"c": 2}]}');
  expect(findJsonEnd('{"a": 1', 0)).toBe(NOT_CLOSED);
  expect(findJsonEnd("  hello", 0)).toBe(NOT_JSON);
});

test("JsonBalance finds the same end however the JSON is cut", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.array(fc.nat(), { maxLength: 8 }), (value, points) => {
      const text = `${JSON.stringify({ value })}rest`;
      const balance = new JsonBalance();
      let start = 0;
      let found = NOT_CLOSED;
      for (const piece of cutAt(text, points)) {
        const end = balance.feed(piece);
        if (end >= 0) {
          found = start + end;
          break;
        }
        start += piece.length;
      }
      expect(found).toBe(text.length - "rest".length);
    }),
  );
});

test("jsonArrayElementEnds splits an array of objects", () => {
  const text = '[{"a":1} , {"b":"]"}]';
  expect(jsonArrayElementEnds(text, 0)).toEqual([8, 20]);
  expect(jsonArrayElementEnds("{}", 0)).toBeUndefined();
});

test("parseJsonObject repairs what it can and refuses non-objects", () => {
  expect(parseJsonObject('{"city": "Par')).toEqual({ city: "Par" });
  expect(parseJsonObject("{'a': 1,}")).toEqual({ a: 1 });
  expect(parseJsonObject("[1]")).toBeUndefined();
  expect(parseJsonObject("just words")).toBeUndefined();
});
