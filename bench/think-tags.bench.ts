import { createTextToolCallParser } from "../src/stream/text-tool-calls/index.js";
import { createThinkTagParser } from "../src/stream/think-tags.js";
import { type BenchSection, fixed, sideBySide, table } from "./harness.js";

/**
 * Throughput of the streaming think-tag and Hermes tool-call parsers on text cut the way LLM streams
 * arrive (4-20 characters a chunk), against a floor that only runs `indexOf` for the tag over the
 * same chunks: the ratio is what the parser's bookkeeping costs on top of the bare scan.
 */

/** A deterministic pseudo-random source, so every run measures the same chunks. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

function chunked(text: string, seed: number): string[] {
  const next = random(seed);
  const chunks: string[] = [];
  for (let index = 0; index < text.length; ) {
    const size = 4 + Math.floor(next() * 17);
    chunks.push(text.slice(index, index + size));
    index += size;
  }
  return chunks;
}

const englishReasoning =
  "Okay, the user wants the weather in Paris for the next three days. I should check whether a tool is " +
  "available for that, and if the units should be metric. Let me think about edge cases: the city name " +
  "might be ambiguous (Paris, Texas), so I will assume France unless told otherwise. ";
const englishAnswer =
  "Here is the forecast for Paris: mild and cloudy on Monday, light rain on Tuesday, and sunny spells " +
  "on Wednesday with highs around 18 °C. Bring an umbrella for Tuesday afternoon. ";
const cjkReasoning = "用户用中文说明了需求，我需要先确认城市和日期，然后调用天气工具获取未来三天的预报，并注意单位。";
const cjkAnswer = "巴黎未来三天：周一多云，周二小雨，周三晴间多云，最高气温约十八度。周二下午请带伞。";

function trace(reasoning: string, answer: string, repeats: number): string {
  return `<think>\n${reasoning.repeat(repeats)}\n</think>\n\n${answer.repeat(Math.max(1, repeats / 4))}`;
}

function hermesTrace(): string {
  const call = (city: string) =>
    `<tool_call>\n${JSON.stringify({ name: "get_weather", arguments: { city, days: 3, units: "metric" } })}\n</tool_call>\n`;
  return `${englishAnswer.repeat(20)}\n\n${call("Paris")}${call("Rome")}${call("Tokyo")}`;
}

function measure(
  label: string,
  text: string,
  tag: string,
  subject: (chunks: string[]) => void,
): Array<string | number> {
  const chunks = chunked(text, 7);
  const bytes = Buffer.byteLength(text, "utf8");
  const floor = () => {
    let found = 0;
    for (const chunk of chunks) if (chunk.indexOf(tag) !== -1) found++;
    if (found < 0) throw new Error("unreachable");
  };
  const result = sideBySide(() => subject(chunks), floor);
  const megabytes = (runsPerSecond: number) => (runsPerSecond * bytes) / 1e6;
  return [
    label,
    `${(bytes / 1024).toFixed(0)} KiB / ${chunks.length}`,
    fixed(megabytes(result.subject), 0),
    fixed(megabytes(result.baseline), 0),
    fixed(result.ratio, 3),
  ];
}

function runThinkTags(chunks: string[]): void {
  const parser = createThinkTagParser();
  for (const chunk of chunks) parser.push(chunk);
  parser.finish();
}

function runHermes(chunks: string[]): void {
  const parser = createTextToolCallParser("hermes");
  for (const chunk of chunks) parser.push(chunk);
  parser.finish();
}

export default async function thinkTagsBench(): Promise<BenchSection> {
  const rows = [
    measure("think tags, English trace + answer", trace(englishReasoning, englishAnswer, 80), "<think>", runThinkTags),
    measure("think tags, CJK trace + answer", trace(cjkReasoning, cjkAnswer, 200), "<think>", runThinkTags),
    measure("hermes tool calls, prose + 3 calls", hermesTrace(), "<tool_call>", runHermes),
  ];
  const markdown = [
    table(["input", "size / chunks (4-20 chars)", "parser MB/s", "indexOf floor MB/s", "parser / floor"], rows),
    "",
    "MB are UTF-8 bytes of the content. The floor only looks for the tag in each chunk and allocates",
    "nothing; the parser also holds back partial tags, builds segment objects and tracks state. Both",
    "figures move with the machine; the ratio is the comparable one.",
  ].join("\n");
  return { title: "Think-tag and text tool-call parsers", markdown };
}
