import { redactBodyText, redactionTriggers } from "./redact.js";
import { type Chunk, chunkBytes, wholeChunk } from "./trace-chunks.js";

/**
 * A trace body's bytes as stored: redacted, then cut into chunks. A client re-sends its whole history on every
 * turn, so a request body mostly begins as one seen lately: the chunks of that shared beginning are taken from
 * the body seen before (a cut depends only on the bytes before it), and only the rest is redacted, cut and
 * hashed. A body with nothing to redact (the usual case) never becomes a string.
 */

/** A request body seen lately: its bytes (a copy), where its chunks end and their hashes. */
interface KnownBody {
  bytes: Buffer;
  ends: number[];
  hashes: Buffer[];
}

/** Bodies remembered per request slot, most recently used last; bounded by count and bytes. */
const KNOWN_BODIES = 16;
const KNOWN_BYTES = 8 * 1024 * 1024;
const LARGEST_KNOWN = 4 * 1024 * 1024;

export class BodyChunker {
  private readonly known: KnownBody[][] = [[], []];
  private readonly knownBytes = [0, 0];
  private readonly triggers: RegExp;
  private readonly secretBytes: Buffer[];
  private readonly secretText: readonly string[];
  /** How far before new bytes a trigger may begin and still reach into them. */
  private readonly reach: number;

  constructor(private readonly secrets: readonly string[]) {
    const triggers = redactionTriggers(secrets);
    this.triggers = triggers.words;
    this.secretText = triggers.secrets;
    this.secretBytes = triggers.secrets.map((secret) => Buffer.from(secret, "utf8"));
    this.reach = triggers.longest - 1;
  }

  /**
   * A request body (slot 0 or 1, each with the bodies of its own kind) as the chunks of its redacted bytes.
   * Chunks come from the remembered body it shares the longest beginning with, as far as that goes.
   */
  request(slot: number, bytes: Buffer): Chunk[] {
    const known = this.known[slot]!;
    let best: KnownBody | undefined;
    let shared = 0;
    for (let index = known.length - 1; index >= 0; index--) {
      const candidate = known[index]!;
      const length = commonPrefix(bytes, candidate.bytes);
      if (length > shared) {
        best = candidate;
        shared = length;
        if (length === bytes.length && length === candidate.bytes.length) break;
      }
    }
    let reused = 0;
    if (best !== undefined) {
      const same = shared === bytes.length && shared === best.bytes.length;
      // The last chunk ends where its body ends, not at a cut: it is this body's only when both are the same.
      while (
        reused < best.ends.length &&
        best.ends[reused]! <= shared &&
        (same || best.ends[reused]! < best.bytes.length)
      ) {
        reused++;
      }
    }
    const from = reused === 0 ? 0 : best!.ends[reused - 1]!;
    // The beginning is that of a body that had nothing to redact; a trigger could still begin in it and reach past.
    if (this.mayNeedRedaction(bytes, from)) return chunkBytes(this.redacted(bytes));
    const chunks: Chunk[] = [];
    let start = 0;
    for (let index = 0; index < reused; index++) {
      const end = best!.ends[index]!;
      chunks.push({ hash: best!.hashes[index]!, bytes: bytes.subarray(start, end) });
      start = end;
    }
    for (const chunk of chunkBytes(bytes, from)) chunks.push(chunk);
    if (best !== undefined && from === bytes.length && bytes.length === best.bytes.length) this.touch(slot, best);
    else this.remember(slot, bytes, chunks);
    return chunks;
  }

  /** A response body as one chunk of its redacted bytes (a response is never sent again). */
  response(bytes: Buffer): Chunk[] {
    return wholeChunk(this.redactedResponse(bytes));
  }

  /** A response body's redacted bytes (the same bytes when there is nothing to redact). */
  redactedResponse(bytes: Buffer): Buffer {
    return this.mayNeedRedaction(bytes, 0) ? this.redacted(bytes) : bytes;
  }

  /** Whether redaction could change anything in `text` (false: surely not). */
  mayNeedRedactionText(text: string): boolean {
    for (const secret of this.secretText) if (text.includes(secret)) return true;
    return this.triggers.test(text.toLowerCase());
  }

  /** Whether anything from `from` on (or a trigger reaching into it) could be replaced by redaction. */
  private mayNeedRedaction(bytes: Buffer, from: number): boolean {
    if (from >= bytes.length) return false;
    const start = Math.max(0, from - this.reach);
    for (const secret of this.secretBytes) if (bytes.indexOf(secret, start) !== -1) return true;
    // The triggers are ASCII: as Latin-1, a UTF-8 byte of another character can never be part of one (nor, lowered,
    // become one: Latin-1 letters lower within Latin-1).
    return this.triggers.test(bytes.toString("latin1", start).toLowerCase());
  }

  private redacted(bytes: Buffer): Buffer {
    return Buffer.from(redactBodyText(bytes.toString("utf8"), this.secrets), "utf8");
  }

  private touch(slot: number, body: KnownBody): void {
    const known = this.known[slot]!;
    known.splice(known.indexOf(body), 1);
    known.push(body);
  }

  private remember(slot: number, bytes: Buffer, chunks: readonly Chunk[]): void {
    if (bytes.length > LARGEST_KNOWN) return;
    const copy = Buffer.allocUnsafeSlow(bytes.length);
    bytes.copy(copy);
    const ends: number[] = [];
    let end = 0;
    for (const chunk of chunks) {
      end += chunk.bytes.length;
      ends.push(end);
    }
    const known = this.known[slot]!;
    known.push({ bytes: copy, ends, hashes: chunks.map((chunk) => chunk.hash) });
    this.knownBytes[slot]! += copy.length;
    while (known.length > KNOWN_BODIES || this.knownBytes[slot]! > KNOWN_BYTES) {
      this.knownBytes[slot]! -= known.shift()!.bytes.length;
    }
  }
}

/** How many bytes `a` and `b` begin with alike: native comparisons over growing spans, then a search in the last. */
export function commonPrefix(a: Uint8Array, b: Uint8Array): number {
  const length = Math.min(a.length, b.length);
  const left = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  let at = 0;
  let span = 4096;
  while (at < length) {
    const end = Math.min(length, at + span);
    if (left.compare(b, at, end, at, end) !== 0) {
      let low = at;
      let high = end;
      // [0, low) is alike; the first difference is before high.
      while (high - low > 32) {
        const middle = (low + high) >>> 1;
        if (left.compare(b, low, middle, low, middle) === 0) low = middle;
        else high = middle;
      }
      while (low < high && a[low] === b[low]) low++;
      return low;
    }
    at = end;
    span *= 2;
  }
  return length;
}
