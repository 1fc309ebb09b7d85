/**
 * What the codecs need of the platform, written for any JavaScript runtime: Node's `Buffer` and `node:crypto` would
 * keep the codecs, streams and repair out of a browser bundle. UTF-8 through `TextEncoder`, randomness through Web
 * Crypto (`globalThis.crypto`, in Node 20 and every browser), base64 by table.
 */

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const URL_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/** Each base64 character's 6 bits, both alphabets; 255 for anything else. */
const SEXTETS = new Uint8Array(128).fill(255);
for (let index = 0; index < 64; index++) {
  SEXTETS[ALPHABET.charCodeAt(index)] = index;
  SEXTETS[URL_ALPHABET.charCodeAt(index)] = index;
}

const utf8Encoder = new TextEncoder();
const utf8Decoder = new TextDecoder("utf-8");

/** UTF-8 text as base64 (`url`: the URL-safe alphabet without padding, as `Buffer`'s `base64url`). */
export function utf8ToBase64(text: string, url = false): string {
  const bytes = utf8Encoder.encode(text);
  const alphabet = url ? URL_ALPHABET : ALPHABET;
  let out = "";
  let index = 0;
  for (; index + 2 < bytes.length; index += 3) {
    const triple = (bytes[index]! << 16) | (bytes[index + 1]! << 8) | bytes[index + 2]!;
    out +=
      alphabet[triple >> 18]! + alphabet[(triple >> 12) & 63]! + alphabet[(triple >> 6) & 63]! + alphabet[triple & 63]!;
  }
  const rest = bytes.length - index;
  if (rest > 0) {
    const triple = (bytes[index]! << 16) | (rest === 2 ? bytes[index + 1]! << 8 : 0);
    out += alphabet[triple >> 18]! + alphabet[(triple >> 12) & 63]!;
    if (rest === 2) out += alphabet[(triple >> 6) & 63]!;
    if (!url) out += rest === 2 ? "=" : "==";
  }
  return out;
}

/**
 * Base64 (either alphabet, padded or not) read as UTF-8 text. Like `Buffer`, it reads what it can: a character
 * outside the alphabets is skipped, a dangling lone character ignored.
 */
export function base64ToUtf8(encoded: string): string {
  const bytes = new Uint8Array(Math.floor((encoded.length * 3) / 4) + 3);
  let length = 0;
  let bits = 0;
  let count = 0;
  for (let index = 0; index < encoded.length; index++) {
    const code = encoded.charCodeAt(index);
    const sextet = code < 128 ? SEXTETS[code]! : 255;
    if (sextet === 255) continue;
    bits = (bits << 6) | sextet;
    count += 6;
    if (count >= 8) {
      count -= 8;
      bytes[length++] = (bits >> count) & 255;
    }
  }
  return utf8Decoder.decode(bytes.subarray(0, length));
}

/** `count` random bytes as lowercase hex (an id's random part). */
export function randomHex(count: number): string {
  const bytes = globalThis.crypto.getRandomValues(new Uint8Array(count));
  let out = "";
  for (const byte of bytes) out += byte.toString(16).padStart(2, "0");
  return out;
}
