import { parentPort } from "node:worker_threads";
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { countBounded } from "./token-count-bounded.js";

/**
 * The o200k_base tokenizer on a thread of its own (see `token-count.ts`): one message in, `{id, text}`, one out,
 * `{id, tokens}` or `{id, error}`. Its tables (about 65 MB) load here, never on the gateway's thread.
 */

/** Special-token markers in user text are counted as text, never rejected. */
const TEXT_ONLY = { disallowedSpecial: new Set<string>() };
const count = (text: string) => countTokens(text, TEXT_ONLY);

parentPort?.on("message", (job: { id: number; text: string }) => {
  try {
    parentPort?.postMessage({ id: job.id, tokens: countBounded(job.text, count) });
  } catch (error) {
    parentPort?.postMessage({ id: job.id, error: (error as Error).message });
  }
});
