import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { messageArbitrary } from "../test-support/arbitraries.js";
import { recordedStreams } from "../test-support/recorded-streams.js";
import { answerEvents, regressionHistory } from "../test-support/regression-history.js";
import type { ConversationStore, MessageSource } from "./conversation-store.js";

/**
 * Part of the conversation store contract (`runConversationContract` runs it for every backend): what a client appended comes back
 * as it sent it, and a streamed answer is stored as the same answer unstreamed.
 */
export function runFidelityContract(fresh: () => Promise<ConversationStore>): void {
  describe("messages as the client sent them", () => {
    test("the client's own JSON of a message comes back byte for byte beside it, in one call or many", async () => {
      const store = await fresh();
      const history = regressionHistory().slice(0, 3);
      // As a client writes them: its key order and spacing, 1.0, escapes, a field the core does not name.
      const sources: Array<MessageSource | undefined> = [
        { format: "anthropic", json: '{ "content" : "caf\\u00e9 1.0",\n  "role":"user", "name": "alice" }' },
        undefined,
        {
          format: "anthropic",
          json: '{"role":"user","content":[{"text":"Go ahead, use the tools.","type":"text","cache_control":{"type":"ephemeral"},"n":1.0}]}',
        },
      ];
      const all = await store.create();
      const appended = await store.append(all.id, history, { sources });
      const one = await store.create();
      for (const [index, message] of history.entries()) {
        const source = sources[index];
        await store.append(one.id, [message], source === undefined ? {} : { sources: [source] });
      }
      for (const id of [all.id, one.id]) {
        const loaded = (await store.load(id))!;
        expect(loaded.map((stored) => stored.source)).toEqual(sources);
        expect(loaded.map((stored) => stored.message)).toEqual(history);
        expect(loaded[1]).not.toHaveProperty("source");
      }
      expect(appended.map((stored) => stored.source)).toEqual(sources);
      // A streamed answer has no client JSON.
      const writer = await store.startMessage(all.id, "assistant");
      for (const event of answerEvents()) writer.push(event);
      expect(await writer.complete()).not.toHaveProperty("source");
      expect((await store.load(all.id))!.at(-1)).not.toHaveProperty("source");
    });

    test("any sources beside any history, split into any batches, load as given", async () => {
      const store = await fresh();
      const sourceArbitrary = fc.option(
        fc
          .tuple(fc.jsonValue({ maxDepth: 3 }), fc.nat(3))
          .map(([value, space]): MessageSource => ({ format: "anthropic", json: JSON.stringify(value, null, space) })),
        { nil: undefined },
      );
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.tuple(messageArbitrary, sourceArbitrary), { maxLength: 6 }),
          fc.array(fc.nat(3), { maxLength: 6 }),
          async (entries, cuts) => {
            const { id } = await store.create();
            let start = 0;
            for (const cut of [...cuts, entries.length]) {
              const end = Math.min(entries.length, start + cut);
              const batch = entries.slice(start, end);
              await store.append(
                id,
                batch.map(([message]) => message),
                { sources: batch.map(([, source]) => source) },
              );
              start = end;
            }
            const loaded = (await store.load(id))!;
            expect(loaded.map((stored) => stored.source)).toEqual(entries.map(([, source]) => source));
            expect(JSON.stringify(loaded.map((stored) => stored.message))).toBe(
              JSON.stringify(entries.map(([message]) => message)),
            );
          },
        ),
        { numRuns: 20 },
      );
    });

    test("sources that do not fit the messages append nothing and say where", async () => {
      const store = await fresh();
      const { id } = await store.create();
      const history = regressionHistory().slice(0, 2);
      await expect(store.append(id, history, { sources: [undefined] })).rejects.toThrow("sources");
      const wrong = [undefined, { format: "xml", json: "<m/>" }] as unknown as MessageSource[];
      await expect(store.append(id, history, { sources: wrong })).rejects.toThrow("sources[1]");
      expect(await store.load(id)).toEqual([]);
    });
  });

  describe("streamed answers", () => {
    test("every recorded stream is stored as the same answer unstreamed", async () => {
      const store = await fresh();
      const { id } = await store.create();
      const streams = await recordedStreams();
      expect(streams.length).toBeGreaterThan(40);
      for (const stream of streams) {
        const writer = await store.startMessage(id, "assistant");
        for (const event of stream.events) writer.push(event);
        // A stream cut by an error is kept as far as it came, marked incomplete, as the gateway leaves it.
        if (stream.events.at(-1)?.type === "finish") await writer.complete();
        else await writer.abort();
      }
      const loaded = (await store.load(id))!;
      streams.forEach((stream, index) => {
        expect(loaded[index]!.message, stream.file).toEqual(stream.whole);
      });
    });
  });
}
