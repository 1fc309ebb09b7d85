import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, expect, test } from "vitest";
import type { Message } from "../../core/index.js";
import { repair, validateFor } from "../../repair/pipeline.js";
import { anthropicTarget } from "../../repair/test-support/targets.js";
import { sqliteStore } from "../open-store.js";
import { crashStreamText } from "../test-support/crash-stream.js";
import { spawnHelper } from "../test-support/run-child.js";

const RUNS = 50;
const PARALLEL = 10;
const LENGTH = 150;

const folder = mkdtempSync(join(tmpdir(), "parley-crash-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

interface Run {
  conversationId: string;
  seq?: number;
  flushed?: { thinking: string; text: string };
  completed: boolean;
}

/** Runs one child, kills it with SIGKILL `killAfterMs` after it opened the store, reports what it said. */
function crashOnce(path: string, conversationId: string, killAfterMs: number): Promise<Run> {
  const child = spawnHelper("stream-child", [`sqlite:${path}`, conversationId, String(LENGTH)]);
  const run: Run = { conversationId, completed: false };
  let buffered = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    const lines = buffered.split("\n");
    buffered = lines.pop() ?? "";
    for (const line of lines) {
      if (line === "ready") setTimeout(() => child.kill("SIGKILL"), killAfterMs);
      else if (line.startsWith("started ")) run.seq = Number(line.slice("started ".length));
      else if (line.startsWith("flushed ")) run.flushed = JSON.parse(line.slice("flushed ".length));
      else if (line === "complete") run.completed = true;
    }
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  return new Promise((resolve, reject) => {
    child.on("close", (code, signal) => {
      if (code !== 0 && signal !== "SIGKILL") reject(new Error(`stream-child failed: ${stderr}`));
      else resolve(run);
    });
  });
}

test(`a stream killed at random points (${RUNS} runs) always reopens with what was flushed`, async () => {
  const path = join(folder, "crash.db");
  const setup = await sqliteStore(new Database(path));
  const prompt: Message = { role: "user", parts: [{ type: "text", text: "Think, then answer." }] };
  const conversations: string[] = [];
  for (let index = 0; index < RUNS; index++) {
    const { id } = await setup.conversations.create();
    await setup.conversations.append(id, [prompt]);
    conversations.push(id);
  }
  await setup.close();

  const full = crashStreamText(LENGTH);
  const runs: Run[] = [];
  let next = 0;
  const worker = async () => {
    while (next < conversations.length) {
      const conversationId = conversations[next++]!;
      // Mostly mid-stream (the stream takes ~100-300 ms), sometimes before the first write or after the end.
      const run = await crashOnce(path, conversationId, Math.random() * 350);
      // Every reopen succeeds and finds the conversation whole.
      const reopened = await sqliteStore(new Database(path));
      const loaded = (await reopened.conversations.load(conversationId))!;
      await reopened.close();
      expect(loaded[0]!.message).toEqual(prompt);
      expect(loaded.length).toBeLessThanOrEqual(2);
      if (run.seq !== undefined) expect(loaded[1]?.seq).toBe(run.seq);
      const answer = loaded[1];
      if (answer) {
        expect(answer.message.role).toBe("assistant");
        if (run.completed) expect(answer.complete).toBe(true);
        const [thinking, text] = answer.message.parts;
        const thinkingText = thinking?.type === "thinking" ? thinking.thinking : "";
        const answerText = text?.type === "text" ? text.text : "";
        // What the child saw flushed is there; nothing is there that the stream did not say.
        expect(full.thinking.startsWith(thinkingText)).toBe(true);
        expect(full.text.startsWith(answerText)).toBe(true);
        expect(thinkingText.startsWith(run.flushed?.thinking ?? "")).toBe(true);
        expect(answerText.startsWith(run.flushed?.text ?? "")).toBe(true);
        if (answer.complete) expect(answer.message.parts).toHaveLength(2);
        const repaired = repair(
          loaded.map((stored) => stored.message),
          anthropicTarget,
        );
        expect(validateFor(repaired.messages, anthropicTarget)).toEqual([]);
      }
      runs.push(run);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));

  const database = new Database(path, { readonly: true });
  expect(database.pragma("integrity_check", { simple: true })).toBe("ok");
  database.close();
  expect(runs).toHaveLength(RUNS);
  // The kills must land mid-stream often enough for the test to mean something.
  expect(runs.filter((run) => run.flushed !== undefined && !run.completed).length).toBeGreaterThanOrEqual(RUNS / 5);
}, 60_000);
