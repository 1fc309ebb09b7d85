import { describe, expect, test } from "vitest";
import { WIRE_FORMATS } from "../core/index.js";
import {
  FORMAT_IDS,
  FORMATS,
  findFormat,
  findUpstreamType,
  formatAdapter,
  orList,
  UPSTREAM_TYPES,
} from "./registry.js";

describe("the format registry", () => {
  test("lists each format under its own id, the ids the CLI and stored data use", () => {
    expect(FORMAT_IDS).toEqual(["anthropic", "openai", "responses", "gemini"]);
    expect([...FORMAT_IDS].sort()).toEqual([...WIRE_FORMATS].sort());
    for (const id of FORMAT_IDS) expect(formatAdapter(id).id).toBe(id);
    expect(findFormat("openai")?.id).toBe("openai");
    expect(findFormat("bard")).toBeUndefined();
    expect(findFormat("toString")).toBeUndefined();
  });

  test("each provider type belongs to one format", () => {
    expect(new Set(UPSTREAM_TYPES).size).toBe(UPSTREAM_TYPES.length);
    for (const adapter of FORMATS) expect(findUpstreamType(adapter.upstream.type)).toBe(adapter);
  });

  test("no two formats answer the same route, and each route's kind has what it needs", () => {
    const routes = FORMATS.flatMap((adapter) =>
      adapter.client.routes.map((route) => ({ key: `${route.method} ${route.path}`, route, adapter })),
    );
    expect(new Set(routes.map((entry) => entry.key)).size).toBe(routes.length);
    for (const { route, adapter } of routes) {
      if (route.kind === "count-tokens") expect(adapter.client.readCountTokensRequest).toBeDefined();
      if (route.kind === "models" || route.kind === "model") expect(adapter.client.models).toBeDefined();
    }
  });

  test("a history's format is told by the marks only it has; Parley's own format needs none", () => {
    const openai = formatAdapter("openai").history;
    const anthropic = formatAdapter("anthropic").history;
    expect(openai.recognizes?.({ role: "tool", tool_call_id: "c", content: "ok" })).toBe(true);
    expect(anthropic.recognizes?.({ role: "user", content: [{ type: "tool_result", tool_use_id: "t" }] })).toBe(true);
    expect(openai.recognizes?.({ role: "user", content: "hi" })).toBe(false);
    expect(anthropic.recognizes?.({ role: "user", content: "hi" })).toBe(false);
    const responses = formatAdapter("responses").history;
    expect(responses.recognizes?.({ type: "function_call_output", call_id: "c", output: "ok" })).toBe(true);
    expect(responses.recognizes?.({ role: "user", content: [{ type: "input_text", text: "hi" }] })).toBe(true);
    expect(responses.recognizes?.({ role: "user", content: "hi" })).toBe(false);
    expect(openai.recognizes?.({ type: "reasoning", summary: [] })).toBe(false);
    expect(anthropic.recognizes?.({ type: "reasoning", summary: [] })).toBe(false);
  });

  test("choices are listed as a person reads them", () => {
    expect(orList(["anthropic", "openai"])).toBe("anthropic or openai");
    expect(orList(["a", "b", "c"])).toBe("a, b or c");
    expect(orList(["a"])).toBe("a");
  });
});
