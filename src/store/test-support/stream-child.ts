/**
 * The process the crash test kills. It streams an answer into conversation argv[3] of the store at argv[2]
 * and reports on stdout what is safely on disk: `ready` once the store is open, `started SEQ`, then after
 * each forced flush `flushed {"thinking":...,"text":...}` (everything pushed before that flush), and
 * `complete` at the end. Background flushes happen in between on the writer's own policy.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { openStore } from "../open-store.js";
import { crashStreamEvents } from "./crash-stream.js";

const [url, conversationId, length] = process.argv.slice(2);
if (url === undefined || conversationId === undefined || length === undefined) {
  throw new Error("usage: stream-child URL CONVERSATION_ID LENGTH");
}
const store = await openStore(url, { traceRetention: false });
process.stdout.write("ready\n");
const writer = await store.conversations.startMessage(conversationId, "assistant");
process.stdout.write(`started ${writer.seq}\n`);
let thinking = "";
let text = "";
let pushed = 0;
for (const event of crashStreamEvents(Number(length))) {
  writer.push(event);
  if (event.type === "thinking-delta") thinking += event.thinking;
  if (event.type === "text-delta") text += event.text;
  pushed++;
  if (pushed % 40 === 0) {
    const snapshot = JSON.stringify({ thinking, text });
    await writer.flush();
    process.stdout.write(`flushed ${snapshot}\n`);
  }
  if (pushed % 3 === 0) await sleep(1);
}
await writer.complete();
process.stdout.write("complete\n");
await store.close();
