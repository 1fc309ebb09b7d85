import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { checkResponsesStream } from "../../test/support/responses-stream.js";
import { runConvert } from "./convert.js";
import { runNormalize } from "./normalize.js";
import { runRepair } from "./repair.js";

/** `parley convert` and `parley repair` with the Responses API as a format, on recorded traffic. */

const fixture = (path: string) => readFileSync(new URL(`../../test/fixtures/${path}`, import.meta.url), "utf8");

async function run(command: typeof runRepair | typeof runNormalize, argv: string[], stdin: string) {
  let stdout = "";
  let stderr = "";
  const code = await command(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), stdin });
  return { code, stdout, stderr };
}

async function convert(argv: string[], text: string) {
  let stdout = "";
  let stderr = "";
  const code = await runConvert(argv, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s) }, { text });
  return { code, stdout, stderr };
}

const codexTurn2 = () => JSON.parse(fixture("codex/codex-0.169.0-turn-2.request.json"));

describe("parley convert with responses", () => {
  test("a Codex request to an Anthropic request, what has no place reported on stderr", async () => {
    const { code, stdout, stderr } = await convert(
      ["request", "--from", "responses", "--to", "anthropic"],
      JSON.stringify(codexTurn2()),
    );
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    // Codex's developer messages stay system messages in place, as a Chat client's do.
    expect(out.messages[0].role).toBe("system");
    expect(out.messages.at(-2).content.map((block: { type: string }) => block.type)).toEqual(["thinking", "tool_use"]);
    // Codex's settings Anthropic has not, once; how its items were written is nothing to report.
    expect(stderr.trim().split("\n")).toEqual([
      "parley: lossy: no Anthropic equivalent for prompt_cache_key, client_metadata, tools [responses-fields-dropped]",
    ]);
  });

  test("a whole Responses answer for an OpenAI client, and an Anthropic answer for a Responses client", async () => {
    const toChat = await convert(
      ["response", "--from", "responses", "--to", "openai"],
      fixture("openai-responses/gpt-5-mini-reasoning-encrypted.json"),
    );
    expect(toChat.code).toBe(0);
    const message = JSON.parse(toChat.stdout).choices[0].message;
    expect(message.content).toContain("Final result: 570");
    expect(message.reasoning_details[0].format).toBe("parley.v1");
    const toResponses = await convert(
      ["response", "--from", "anthropic", "--to", "responses"],
      fixture("anthropic/claude-sonnet-4.5-thinking-signature.json"),
    );
    const out = JSON.parse(toResponses.stdout);
    expect(out.object).toBe("response");
    expect(out.output.map((item: { type: string }) => item.type)).toEqual(["reasoning", "message"]);
  });

  test("a Responses error body converts to the other format's error", async () => {
    const { stdout } = await convert(
      ["response", "--from", "responses", "--to", "anthropic"],
      JSON.stringify({ error: { message: "nope", type: "invalid_request_error", code: "invalid_prompt" } }),
    );
    expect(JSON.parse(stdout)).toEqual({ type: "error", error: { type: "invalid_request_error", message: "nope" } });
  });

  test("a recorded Responses stream to Anthropic events, and an Anthropic stream to a valid Responses stream", async () => {
    const events = fixture("openai-responses/gpt-5.1-codex-max-reasoning-tool-call.chunks.jsonl")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => `event: ${JSON.parse(line).type}\ndata: ${line}\n\n`)
      .join("");
    const toAnthropic = await convert(["stream", "--from", "responses", "--to", "anthropic"], events);
    expect(toAnthropic.code).toBe(0);
    expect(toAnthropic.stdout).toContain("signature_delta");
    expect(toAnthropic.stdout).toContain('"name":"calculator"');
    const toResponses = await convert(
      ["stream", "--from", "anthropic", "--to", "responses"],
      fixture("anthropic/claude-sonnet-4-thinking-tool-use.sse"),
    );
    expect(toResponses.code).toBe(0);
    const checked = checkResponsesStream(toResponses.stdout);
    expect((checked.assembled.output as Array<{ type: string }>).map((item) => item.type)).toEqual([
      "reasoning",
      "function_call",
    ]);
  });
});

describe("parley repair and normalize with responses", () => {
  test("repair reads Responses items and writes them back as they came when nothing needs repair", async () => {
    const { input } = codexTurn2();
    const { code, stdout } = await run(runRepair, ["--for", "responses"], JSON.stringify({ messages: input }));
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ messages: input, report: [] });
  });

  test("repair --for responses answers an interrupted call, and --for anthropic reads Responses items", async () => {
    const { input } = codexTurn2();
    const cut = input.slice(0, -1);
    const forResponses = JSON.parse(
      (await run(runRepair, ["--for", "responses"], JSON.stringify({ messages: cut }))).stdout,
    );
    expect(forResponses.messages.at(-1)).toMatchObject({ type: "function_call_output", call_id: "call_1" });
    expect(forResponses.report.map((entry: { action: string }) => entry.action)).toContain(
      "added-interrupted-tool-result",
    );
    const forAnthropic = JSON.parse(
      (await run(runRepair, ["--for", "anthropic"], JSON.stringify({ messages: input }))).stdout,
    );
    expect(forAnthropic.messages.map((message: { role: string }) => message.role)).toEqual([
      "system",
      "system",
      "user",
      "assistant",
      "user",
    ]);
  });

  test("normalize takes Responses items beside other shapes", async () => {
    const entries = [
      { role: "user", content: "plain", timestamp: 1 },
      { type: "function_call", call_id: "c1", name: "f", arguments: "{}" },
      { type: "function_call_output", call_id: "c1", output: "ok" },
    ];
    const { code, stdout } = await run(runNormalize, [], JSON.stringify(entries));
    expect(code).toBe(0);
    const out = JSON.parse(stdout);
    expect(out.report.map((entry: { shape: string }) => entry.shape)).toEqual(["plain", "responses", "responses"]);
    expect(out.messages.at(-1)).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "c1", content: "ok" }],
    });
  });
});
