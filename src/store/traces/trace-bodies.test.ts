import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { REDACTED, redactBodyText } from "./redact.js";
import { BodyChunker, commonPrefix } from "./trace-bodies.js";
import { chunkBytes } from "./trace-chunks.js";

const SECRET = "upstream-secret-0123456789";

/** A body as a client sends it: a history that grows by a turn, now and then holding something to redact. */
const turn = fc.oneof(
  { weight: 6, arbitrary: fc.string({ minLength: 0, maxLength: 3000 }) },
  { weight: 2, arbitrary: fc.string({ unit: "grapheme", maxLength: 2000 }) },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "Authorization: Bearer abcdefghijklmnop",
      '"x-api-key": "k-123456789"',
      "sk-proj-abcdefgh1234",
      "https://h/v1?key=AIzaSy123&x=1",
      SECRET,
      "basic dXNlcjpwYXNzd29yZA==",
      "AUTHORIZATION: BEARER abcdefghijklmnop",
      '"X-Api-Key": "k-123456789"',
    ),
  },
);

function key(chunks: ReadonlyArray<{ hash: Buffer; bytes: Buffer }>): string[] {
  return chunks.map((chunk) => `${chunk.hash.toString("hex")}:${chunk.bytes.length}`);
}

describe("request bodies cut where they are new", () => {
  test("give the chunks of the whole redacted body, whatever was seen before, and never a key", () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(turn, { minLength: 1, maxLength: 12 }), { minLength: 1, maxLength: 4 }),
        fc.array(fc.nat(), { minLength: 1, maxLength: 12 }),
        (sessions, order) => {
          const chunker = new BodyChunker([SECRET]);
          // Interleaved sessions, each re-sending its history with one turn more (as a client does).
          const lengths = sessions.map(() => 0);
          for (const pick of order) {
            const session = pick % sessions.length;
            const turns = sessions[session]!;
            lengths[session] = Math.min(turns.length, lengths[session]! + 1);
            // Unescaped quotes: a credential member in the text stands for one of the body's own members.
            const text = JSON.stringify({ messages: turns.slice(0, lengths[session]) }).replaceAll('\\"', '"');
            const chunks = chunker.request(0, Buffer.from(text, "utf8"));
            const expected = Buffer.from(redactBodyText(text, [SECRET]), "utf8");
            expect(Buffer.concat(chunks.map((chunk) => chunk.bytes)).equals(expected)).toBe(true);
            expect(key(chunks)).toEqual(key(chunkBytes(expected)));
            const stored = Buffer.concat(chunks.map((chunk) => chunk.bytes)).toString("utf8");
            for (const secret of [SECRET, "abcdefghijklmnop", "k-123456789", "AIzaSy123", "dXNlcjpwYXNzd29yZA=="]) {
              expect(stored.includes(secret)).toBe(false);
            }
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  test("a key split across the end of a body seen before is still redacted", () => {
    const chunker = new BodyChunker([]);
    const history = `{"messages":["${"x".repeat(20_000)}`;
    chunker.request(0, Buffer.from(`${history}"]}`));
    const next = `${history} Bearer abcdefghijklmnop"]}`;
    const stored = Buffer.concat(chunker.request(0, Buffer.from(next)).map((chunk) => chunk.bytes)).toString();
    expect(stored).toBe(`${history} Bearer ${REDACTED}"]}`);
  });

  test("a response goes as one chunk, redacted", () => {
    const chunker = new BodyChunker([]);
    const [chunk] = chunker.response(Buffer.from('data: {"a":"sk-abcdefghijkl"}\n\n'));
    expect(chunk!.bytes.toString()).toBe(`data: {"a":"sk-${REDACTED}"}\n\n`);
    // Whatever the case of the words that say a key follows.
    const shouted = chunker.redactedResponse(
      Buffer.from('data: {"AUTHORIZATION":"x","a":"BASIC dXNlcjpwYXNzd29yZA=="}'),
    );
    expect(shouted.toString()).toBe(`data: {"AUTHORIZATION":"${REDACTED}","a":"BASIC ${REDACTED}"}`);
  });
});

describe("commonPrefix", () => {
  test("is the length both begin with alike", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 20_000 }), fc.uint8Array({ maxLength: 300 }), fc.nat(), (a, tail, at) => {
        const cut = a.length === 0 ? 0 : at % a.length;
        const b = Buffer.concat([a.subarray(0, cut), tail]);
        let expected = 0;
        while (expected < Math.min(a.length, b.length) && a[expected] === b[expected]) expected++;
        expect(commonPrefix(a, b)).toBe(expected);
      }),
    );
  });
});
