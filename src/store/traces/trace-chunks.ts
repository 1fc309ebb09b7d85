import { createHash } from "node:crypto";
import { deflateRawSync, inflateRawSync } from "node:zlib";

/**
 * Content-defined chunking of trace bodies (FastCDC's normalized gear hash): a cut depends only on the 32
 * bytes before it, so a body that re-sends a history with a turn added cuts the same way everywhere but near
 * the edit, and shares every other chunk with the body before it. Chunks are addressed by their SHA-256.
 */
export const MIN_CHUNK = 1024;
export const AVERAGE_CHUNK = 4096;
export const MAX_CHUNK = 16 * 1024;
// A cut needs the hash's top 14 bits zero before the average size and its top 10 after: sizes gather around it.
const HARD_MASK = 0xfffc0000 | 0;
const EASY_MASK = 0xffc00000 | 0;

/** Fixed forever: another table would cut differently and share nothing with chunks already stored. */
const GEAR = (() => {
  const table = new Int32Array(256);
  let state = 0x9e3779b9;
  for (let index = 0; index < 256; index++) {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    table[index] = state;
  }
  return table;
})();

/** The end of the chunk starting at `start` (exclusive). */
function cutPoint(bytes: Uint8Array, start: number): number {
  const remaining = bytes.length - start;
  if (remaining <= MIN_CHUNK) return bytes.length;
  const stop = start + Math.min(remaining, MAX_CHUNK);
  const normal = Math.min(start + AVERAGE_CHUNK, stop);
  let hash = 0;
  let index = start + MIN_CHUNK;
  for (; index < normal; index++) {
    hash = ((hash << 1) + GEAR[bytes[index]!]!) | 0;
    if ((hash & HARD_MASK) === 0) return index + 1;
  }
  for (; index < stop; index++) {
    hash = ((hash << 1) + GEAR[bytes[index]!]!) | 0;
    if ((hash & EASY_MASK) === 0) return index + 1;
  }
  return stop;
}

export interface Chunk {
  /** SHA-256 of the bytes. */
  hash: Buffer;
  bytes: Buffer;
}

/**
 * The chunks of `bytes` in order; their concatenation is `bytes`. From `from` on (a cut point of a body these
 * bytes begin like), the chunks are those the whole body has there.
 */
export function chunkBytes(bytes: Buffer, from = 0): Chunk[] {
  const chunks: Chunk[] = [];
  for (let start = from; start < bytes.length; ) {
    const end = cutPoint(bytes, start);
    const slice = bytes.subarray(start, end);
    chunks.push({ hash: createHash("sha256").update(slice).digest(), bytes: slice });
    start = end;
  }
  return chunks;
}

/** `bytes` as one chunk (an empty body has none). */
export function wholeChunk(bytes: Buffer): Chunk[] {
  return bytes.length === 0 ? [] : [{ hash: createHash("sha256").update(bytes).digest(), bytes }];
}

/** How a chunk's bytes are stored. */
export const RAW = 0;
export const DEFLATED = 1;

/**
 * Deflate with a 16 KB window at level 1: a new zlib stream per chunk is most of the cost for a few KB, and a full
 * window's state is four times the allocation for the same ratio on chunks this size (measured: about a third of
 * the time, for the same size); level 1 compresses a 12 KB event stream as small as level 4 in under half the
 * time (13 against 31 µs).
 */
const DEFLATE = { level: 1, windowBits: 14, memLevel: 7 } as const;

/**
 * Below this a chunk is stored as it is: a zlib stream's set-up costs about 13 µs whatever the input (measured
 * on a 189-byte answer: 13 µs to save 51 bytes), and a whole JSON answer is often this small. Two of them a
 * trace were a fifth of the SQLite writer's time.
 */
const MIN_DEFLATE = 512;

/** A chunk as stored: deflated when that saves a tenth or more. */
export function encodeChunk(bytes: Buffer, minDeflate = MIN_DEFLATE): { encoding: number; data: Buffer } {
  if (bytes.length >= minDeflate) {
    const deflated = deflateRawSync(bytes, DEFLATE);
    if (deflated.length < bytes.length * 0.9) return { encoding: DEFLATED, data: ownMemory(deflated) };
  }
  return { encoding: RAW, data: ownMemory(bytes) };
}

/**
 * The bytes in memory of their own. A slice (of the body, of zlib's 16 KB output buffer) or a small Buffer cut
 * from Node's shared 8 KB pool keeps the whole of that alive as long as the chunk is stored: the memory store's
 * heap grew past what it accounted.
 */
function ownMemory(bytes: Buffer): Buffer {
  if (bytes.byteOffset === 0 && bytes.buffer.byteLength === bytes.length) return bytes;
  const copy = Buffer.allocUnsafeSlow(bytes.length);
  bytes.copy(copy);
  return copy;
}

/**
 * Below this a trace's inline bodies are stored as they are: a JSON answer of a few hundred bytes saves a few
 * hundred more deflated, for the ~9 µs a zlib stream takes to set up, the largest single cost of its trace.
 */
const MIN_INLINE_DEFLATE = 4096;

/**
 * A trace's inline bodies (its responses, see `inlineResponses`) as one blob: their bytes one after another, in
 * the order of its body references, stored as a chunk is (deflated when that pays), behind one encoding byte.
 */
export function encodeInline(parts: readonly Buffer[]): Buffer | null {
  if (parts.length === 0) return null;
  let length = 0;
  for (const part of parts) length += part.length;
  if (length >= MIN_INLINE_DEFLATE) {
    const deflated = deflateRawSync(parts.length === 1 ? parts[0]! : Buffer.concat(parts, length), DEFLATE);
    if (deflated.length < length * 0.9) return withEncoding(DEFLATED, [deflated], deflated.length);
  }
  return withEncoding(RAW, parts, length);
}

/** The blob, the parts copied straight into it: it is bound to a statement and let go, so pooled memory will do. */
function withEncoding(encoding: number, parts: readonly Buffer[], length: number): Buffer {
  const blob = Buffer.allocUnsafe(length + 1);
  blob[0] = encoding;
  let at = 1;
  for (const part of parts) at += part.copy(blob, at);
  return blob;
}

export function decodeInline(blob: Uint8Array): Buffer {
  return decodeChunk(blob[0]!, blob.subarray(1));
}

export function decodeChunk(encoding: number, data: Uint8Array): Buffer {
  return encoding === DEFLATED ? inflateRawSync(data) : Buffer.from(data.buffer, data.byteOffset, data.byteLength);
}

/**
 * The bodies' chunk ids as one blob: per body its slot, form, length and chunk count, then every id as a
 * zigzag delta from the one before, all varints, deflated. A re-sent history's ids mostly run +1, so a
 * 2 MB body's five hundred references take a few dozen bytes.
 */
export interface BodyRefs {
  slot: number;
  form: number;
  byteLength: number;
  ids: number[];
}

export function encodeRefs(bodies: readonly BodyRefs[]): Buffer {
  const out: number[] = [];
  const varint = (value: number) => {
    let rest = value;
    while (rest >= 0x80) {
      out.push((rest % 0x80) | 0x80);
      rest = Math.floor(rest / 0x80);
    }
    out.push(rest);
  };
  varint(bodies.length);
  let previous = 0;
  for (const body of bodies) {
    varint(body.slot);
    varint(body.form);
    varint(body.byteLength);
    varint(body.ids.length);
    for (const id of body.ids) {
      const delta = id - previous;
      varint(delta >= 0 ? delta * 2 : -delta * 2 - 1);
      previous = id;
    }
  }
  const plain = Buffer.from(out);
  // A short list is not worth a zlib stream.
  const deflated = plain.length < 128 ? plain : deflateRawSync(plain, DEFLATE);
  return deflated.length < plain.length
    ? Buffer.concat([Buffer.of(DEFLATED), deflated])
    : Buffer.concat([Buffer.of(RAW), plain]);
}

export function decodeRefs(blob: Uint8Array): BodyRefs[] {
  const bytes = blob[0] === DEFLATED ? inflateRawSync(blob.subarray(1)) : blob.subarray(1);
  let offset = 0;
  const varint = () => {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = bytes[offset++];
      if (byte === undefined) throw new Error("trace body references are cut short");
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  };
  const bodies: BodyRefs[] = [];
  const count = varint();
  let previous = 0;
  for (let body = 0; body < count; body++) {
    const slot = varint();
    const form = varint();
    const byteLength = varint();
    const length = varint();
    const ids: number[] = new Array(length);
    for (let index = 0; index < length; index++) {
      const zigzag = varint();
      previous += zigzag % 2 === 0 ? zigzag / 2 : -(zigzag + 1) / 2;
      ids[index] = previous;
    }
    bodies.push({ slot, form, byteLength, ids });
  }
  return bodies;
}
