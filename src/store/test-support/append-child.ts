/**
 * A second process for the concurrency tests: opens the store at argv[2] and appends argv[4] batches of
 * three messages to conversation argv[3], one call per batch, as another gateway would.
 */
import { openStore } from "../open-store.js";
import { appendBatch } from "./batches.js";

const [url, conversationId, count, label] = process.argv.slice(2);
if (url === undefined || conversationId === undefined || count === undefined || label === undefined) {
  throw new Error("usage: append-child URL CONVERSATION_ID BATCHES LABEL");
}
const store = await openStore(url, { traceRetention: false });
process.stdout.write("ready\n");
const batches = Number(count);
for (let batch = 0; batch < batches; batch++)
  await store.conversations.append(conversationId, appendBatch(label, batch));
await store.close();
process.stdout.write("done\n");
