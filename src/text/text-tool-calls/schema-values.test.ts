import { describe, expect, test } from "vitest";
import { schemaTypes, stripOneNewline, typeParameterValue } from "./schema-values.js";

describe("typeParameterValue", () => {
  test("follows the declared type", () => {
    expect(typeParameterValue("\n42\n", { type: "integer" })).toBe(42);
    expect(typeParameterValue("4.5", { type: "integer" })).toBe("4.5");
    expect(typeParameterValue(" -1e3 ", { type: "number" })).toBe(-1000);
    expect(typeParameterValue("FALSE", { type: "boolean" })).toBe(false);
    expect(typeParameterValue("yes", { type: "boolean" })).toBe("yes");
    expect(typeParameterValue('{"a": [1]}', { type: "object" })).toEqual({ a: [1] });
    expect(typeParameterValue("[1, 2,]", { type: "array" })).toEqual([1, 2]);
    expect(typeParameterValue('{"a": 1}', { type: "array" })).toBe('{"a": 1}');
    expect(typeParameterValue("null", { type: ["integer", "null"] })).toBeNull();
    expect(typeParameterValue("7", { anyOf: [{ type: "integer" }, { type: "null" }] })).toBe(7);
  });

  test("a string type keeps the text as written, one template newline aside", () => {
    expect(typeParameterValue("\n007\n", { type: "string" })).toBe("007");
    expect(typeParameterValue("\n\nline one\nline two\n\n", { type: "string" })).toBe("\nline one\nline two\n");
    expect(typeParameterValue("true", { type: ["string", "boolean"] })).toBe("true");
    expect(typeParameterValue("a", { enum: ["a", "b"] })).toBe("a");
  });

  test("an unknown parameter is JSON when it parses, else the string", () => {
    expect(typeParameterValue("12", undefined)).toBe(12);
    expect(typeParameterValue("[true]", {})).toEqual([true]);
    expect(typeParameterValue("Paris", undefined)).toBe("Paris");
  });
});

test("schemaTypes reads type lists, unions, enums and implied types", () => {
  expect([...schemaTypes({ type: ["string", "null"] })].sort()).toEqual(["null", "string"]);
  expect([...schemaTypes({ oneOf: [{ type: "integer" }, { anyOf: [{ type: "boolean" }] }] })].sort()).toEqual([
    "boolean",
    "integer",
  ]);
  expect([...schemaTypes({ enum: [1, 2] })]).toEqual(["integer"]);
  expect([...schemaTypes({ properties: {} })]).toEqual(["object"]);
  expect([...schemaTypes({ description: "anything" })]).toEqual([]);
});

test("stripOneNewline removes at most one newline on each side", () => {
  expect(stripOneNewline("\nx\n")).toBe("x");
  expect(stripOneNewline("\r\nx\r\n")).toBe("x");
  expect(stripOneNewline("\n")).toBe("");
  expect(stripOneNewline(" x ")).toBe(" x ");
});
