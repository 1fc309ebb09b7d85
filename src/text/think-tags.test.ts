import { readFileSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { cutAt } from "../../test/support/cut.js";
import { assertNever } from "../core/parts.js";
import { parseSse } from "../stream/sse.js";
import {
  createThinkTagParser,
  mergeThinkSegments,
  splitThinkTags,
  type ThinkSegment,
  type ThinkSegmentSink,
  type ThinkTagOptions,
} from "./think-tags.js";

function streamed(pieces: readonly string[], options: ThinkTagOptions = {}): ThinkSegment[] {
  const parser = createThinkTagParser(options);
  const out: ThinkSegment[] = [];
  for (const piece of pieces) out.push(...parser.push(piece));
  out.push(...parser.finish());
  return out;
}

/** Writes segments back as tagged text; an unclosed final block gains its close tag. */
function render(segments: readonly ThinkSegment[]): string {
  return segments
    .map((segment) => {
      switch (segment.type) {
        case "text":
        case "thinking":
          return segment.text;
        case "thinking-start":
          return "<think>";
        case "thinking-end":
          return "</think>";
        default:
          return assertNever(segment, "think segment");
      }
    })
    .join("");
}

const fragment = fc.oneof(
  fc.constantFrom("<think>", "</think>", "<", "<th", "<think", "</", "</think", "think>", ">", "\n", "\n\n"),
  fc.string({ unit: "grapheme", maxLength: 12 }),
  fc.constantFrom("用户用中文说", "你好，世界", "😀👍🏽", "é", "\u{1F600}"),
);
const content = fc.array(fragment, { maxLength: 16 }).map((fragments) => fragments.join(""));

describe("splitThinkTags", () => {
  test("interleaved blocks keep their order", () => {
    expect(splitThinkTags("<think>a</think>m<think>b</think>")).toEqual([
      { type: "thinking-start" },
      { type: "thinking", text: "a" },
      { type: "thinking-end" },
      { type: "text", text: "m" },
      { type: "thinking-start" },
      { type: "thinking", text: "b" },
      { type: "thinking-end" },
    ]);
  });

  test("an empty block is still a block", () => {
    expect(splitThinkTags("<think></think>\n\nhi")).toEqual([
      { type: "thinking-start" },
      { type: "thinking-end" },
      { type: "text", text: "\n\nhi" },
    ]);
  });

  test("an unclosed block ends as thinking", () => {
    expect(splitThinkTags("x<think>still going")).toEqual([
      { type: "text", text: "x" },
      { type: "thinking-start" },
      { type: "thinking", text: "still going" },
      { type: "thinking-end" },
    ]);
  });

  test("an open tag inside a block is thinking text, not a nested block", () => {
    expect(splitThinkTags("<think>a<think>b</think>c")).toEqual([
      { type: "thinking-start" },
      { type: "thinking", text: "a<think>b" },
      { type: "thinking-end" },
      { type: "text", text: "c" },
    ]);
  });

  test("an orphan close tag stays as text, byte for byte", () => {
    expect(splitThinkTags("reasoning</think>\n\nanswer</think>")).toEqual([
      { type: "text", text: "reasoning</think>\n\nanswer</think>" },
    ]);
  });

  test("startInThinking: text up to the first close tag is thinking", () => {
    expect(splitThinkTags("reasoning</think>\n\nanswer</think>", { startInThinking: true })).toEqual([
      { type: "thinking-start" },
      { type: "thinking", text: "reasoning" },
      { type: "thinking-end" },
      { type: "text", text: "\n\nanswer</think>" },
    ]);
  });

  test("startInThinking absorbs an explicit open tag at the very start", () => {
    expect(splitThinkTags("<think>r</think>a", { startInThinking: true })).toEqual(splitThinkTags("<think>r</think>a"));
    expect(mergeThinkSegments(streamed(["<th", "ink>r</th", "ink>a"], { startInThinking: true }))).toEqual(
      splitThinkTags("<think>r</think>a"),
    );
    expect(splitThinkTags("", { startInThinking: true })).toEqual([
      { type: "thinking-start" },
      { type: "thinking-end" },
    ]);
  });

  test("custom tags (Kimi's ◁think▷)", () => {
    expect(splitThinkTags("◁think▷plan◁/think▷done", { openTag: "◁think▷", closeTag: "◁/think▷" })).toEqual([
      { type: "thinking-start" },
      { type: "thinking", text: "plan" },
      { type: "thinking-end" },
      { type: "text", text: "done" },
    ]);
  });

  test("text segments hold no open tag and thinking segments no close tag; rendering gives the input back", () => {
    fc.assert(
      fc.property(content, (input) => {
        const segments = splitThinkTags(input);
        for (const segment of segments) {
          if (segment.type === "text") expect(segment.text).not.toContain("<think>");
          if (segment.type === "thinking") expect(segment.text).not.toContain("</think>");
        }
        const rendered = render(segments);
        expect([input, input + "</think>"]).toContain(rendered);
      }),
      { numRuns: 500 },
    );
  });
});

describe("createThinkTagParser", () => {
  test("tags cut across pushes: the contract's CJK case", () => {
    const out = streamed(["<think>用户", "用中文说", "</think>", "\n\n", "你好"]);
    expect(mergeThinkSegments(out)).toEqual([
      { type: "thinking-start" },
      { type: "thinking", text: "用户用中文说" },
      { type: "thinking-end" },
      { type: "text", text: "\n\n你好" },
    ]);
  });

  test("holds back only a possible tag start and releases it when ruled out", () => {
    const parser = createThinkTagParser();
    expect(parser.push("a<th")).toEqual([{ type: "text", text: "a" }]);
    expect(parser.push("e")).toEqual([{ type: "text", text: "<the" }]);
    expect(parser.push("<")).toEqual([]);
    expect(parser.push("think")).toEqual([]);
    expect(parser.push(">x</")).toEqual([{ type: "thinking-start" }, { type: "thinking", text: "x" }]);
    expect(parser.push("b")).toEqual([{ type: "thinking", text: "</b" }]);
    expect(parser.finish()).toEqual([{ type: "thinking-end" }]);
  });

  test("a held partial tag at the end comes out at finish", () => {
    const parser = createThinkTagParser();
    expect(parser.push("done <thin")).toEqual([{ type: "text", text: "done " }]);
    expect(parser.finish()).toEqual([{ type: "text", text: "<thin" }]);
  });

  test("never emits a lone high surrogate at a push boundary", () => {
    const parser = createThinkTagParser();
    expect(parser.push("a\ud83d")).toEqual([{ type: "text", text: "a" }]);
    expect(parser.push("\ude00b")).toEqual([{ type: "text", text: "😀b" }]);
  });

  test("for any split, merged streamed output equals the whole-content split", () => {
    fc.assert(
      fc.property(content, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (input, points, startInThinking) => {
        const options = { startInThinking };
        const pieces = cutAt(input, points);
        const out = streamed(pieces, options);
        expect(mergeThinkSegments(out)).toEqual(splitThinkTags(input, options));
        for (const segment of out) {
          if (segment.type === "text" || segment.type === "thinking") expect(segment.text).not.toBe("");
        }
      }),
      { numRuns: 1000 },
    );
  });

  test("one character at a time gives the same as one push", () => {
    fc.assert(
      fc.property(content, (input) => {
        expect(mergeThinkSegments(streamed([...input]))).toEqual(splitThinkTags(input));
      }),
    );
  });

  test("recorded DeepSeek-R1 stream with inline think tokens", () => {
    const transcript = readFileSync(
      new URL("../../test/fixtures/huggingface/deepseek-r1-think-inline.sse", import.meta.url),
      "utf8",
    );
    const pieces = parseSse(transcript)
      .filter((message) => message.data !== "[DONE]")
      .map((message) => JSON.parse(message.data) as { choices: Array<{ delta?: { content?: string | null } }> })
      .map((chunk) => chunk.choices[0]?.delta?.content ?? "");
    const whole = pieces.join("");
    const merged = mergeThinkSegments(streamed(pieces));
    expect(merged).toEqual(splitThinkTags(whole));
    expect(merged.map((segment) => segment.type)).toEqual(["thinking-start", "thinking", "thinking-end", "text"]);
    const thinking = merged[1];
    const text = merged[3];
    expect(thinking?.type === "thinking" && thinking.text.startsWith("\nOkay,")).toBe(true);
    expect(text?.type === "text" && text.text.length > 0 && !text.text.includes("</think>")).toBe(true);
    expect(render(merged)).toBe(whole);
  });
});

/** Collects what `pushTo` / `finishTo` hand to the sink as the array form's segments. */
function sunk(pieces: readonly string[], options: ThinkTagOptions = {}): ThinkSegment[] {
  const parser = createThinkTagParser(options);
  const out: ThinkSegment[] = [];
  const sink: ThinkSegmentSink = {
    text: (text) => out.push({ type: "text", text }),
    thinkingStart: () => out.push({ type: "thinking-start" }),
    thinking: (text) => out.push({ type: "thinking", text }),
    thinkingEnd: () => out.push({ type: "thinking-end" }),
  };
  for (const piece of pieces) parser.pushTo(piece, sink);
  parser.finishTo(sink);
  return out;
}

describe("pushTo / finishTo", () => {
  test("hands the sink exactly the segments push and finish return, for any split", () => {
    fc.assert(
      fc.property(content, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (input, points, startInThinking) => {
        const pieces = cutAt(input, points);
        expect(sunk(pieces, { startInThinking })).toEqual(streamed(pieces, { startInThinking }));
      }),
      { numRuns: 1000 },
    );
  });

  test("the two forms can be mixed on one parser", () => {
    fc.assert(
      fc.property(content, fc.array(fc.nat(), { maxLength: 12 }), fc.boolean(), (input, points, startInThinking) => {
        const pieces = cutAt(input, points);
        const parser = createThinkTagParser({ startInThinking });
        const out: ThinkSegment[] = [];
        const sink: ThinkSegmentSink = {
          text: (text) => out.push({ type: "text", text }),
          thinkingStart: () => out.push({ type: "thinking-start" }),
          thinking: (text) => out.push({ type: "thinking", text }),
          thinkingEnd: () => out.push({ type: "thinking-end" }),
        };
        pieces.forEach((piece, index) => {
          if (index % 2 === 0) parser.pushTo(piece, sink);
          else out.push(...parser.push(piece));
        });
        parser.finishTo(sink);
        expect(out).toEqual(streamed(pieces, { startInThinking }));
      }),
      { numRuns: 500 },
    );
  });

  test("a push with no tag character goes to the sink whole, in the current state", () => {
    const parser = createThinkTagParser();
    const calls: string[] = [];
    const sink: ThinkSegmentSink = {
      text: (text) => calls.push(`text:${text}`),
      thinkingStart: () => calls.push("start"),
      thinking: (text) => calls.push(`thinking:${text}`),
      thinkingEnd: () => calls.push("end"),
    };
    parser.pushTo("plain", sink);
    parser.pushTo("<think>a", sink);
    parser.pushTo("b", sink);
    parser.pushTo("", sink);
    parser.pushTo("x\ud83d", sink);
    parser.pushTo("\ude00</think>", sink);
    parser.finishTo(sink);
    expect(calls).toEqual([
      "text:plain",
      "start",
      "thinking:a",
      "thinking:b",
      "thinking:x",
      "thinking:\ud83d\ude00",
      "end",
    ]);
  });
});
