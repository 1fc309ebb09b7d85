/**
 * An image's width and height, read from its header inside the base64 text without decoding the rest: PNG (IHDR),
 * GIF (the logical screen), WebP (VP8, VP8L and VP8X) and JPEG (the first start-of-frame marker, found by walking
 * the segments, each read where it begins). Anything else, or a header cut short, gives undefined.
 */
export interface ImageSize {
  width: number;
  height: number;
}

export function imageSize(base64: string): ImageSize | undefined {
  const read = base64Reader(base64);
  const head = read(0, 30);
  if (head.length < 10) return undefined;
  if (head.readUInt32BE(0) === 0x89504e47 && head.length >= 24) {
    return positive(head.readUInt32BE(16), head.readUInt32BE(20));
  }
  const signature = head.toString("latin1", 0, 6);
  if (signature === "GIF87a" || signature === "GIF89a") return positive(head.readUInt16LE(6), head.readUInt16LE(8));
  if (head.toString("latin1", 0, 4) === "RIFF" && head.length >= 30 && head.toString("latin1", 8, 12) === "WEBP") {
    return webpSize(head);
  }
  if (head[0] === 0xff && head[1] === 0xd8) return jpegSize(read);
  return undefined;
}

function webpSize(head: Buffer): ImageSize | undefined {
  switch (head.toString("latin1", 12, 16)) {
    case "VP8 ":
      return positive(head.readUInt16LE(26) & 0x3fff, head.readUInt16LE(28) & 0x3fff);
    case "VP8L": {
      const bits = head.readUInt32LE(21);
      return positive((bits & 0x3fff) + 1, ((bits >>> 14) & 0x3fff) + 1);
    }
    case "VP8X":
      return positive(head.readUIntLE(24, 3) + 1, head.readUIntLE(27, 3) + 1);
    default:
      return undefined;
  }
}

/** The start-of-frame markers (baseline, progressive, lossless, arithmetic), which carry the frame's size. */
const START_OF_FRAME = new Set([0xc0, 0xc1, 0xc2, 0xc3, 0xc5, 0xc6, 0xc7, 0xc9, 0xca, 0xcb, 0xcd, 0xce, 0xcf]);
/** Segments walked before giving up: EXIF, ICC profiles and thumbnails come first, rarely more than a dozen. */
const MAX_SEGMENTS = 256;

function jpegSize(read: (offset: number, length: number) => Buffer): ImageSize | undefined {
  let offset = 2;
  for (let segment = 0; segment < MAX_SEGMENTS; segment++) {
    const header = read(offset, 9);
    if (header.length < 4 || header[0] !== 0xff) return undefined;
    const marker = header[1]!;
    // Fill bytes before a marker.
    if (marker === 0xff) {
      offset++;
      continue;
    }
    if (START_OF_FRAME.has(marker)) {
      return header.length < 9 ? undefined : positive(header.readUInt16BE(7), header.readUInt16BE(5));
    }
    offset += 2 + header.readUInt16BE(2);
  }
  return undefined;
}

function positive(width: number, height: number): ImageSize | undefined {
  return width > 0 && height > 0 ? { width, height } : undefined;
}

/** Bytes `offset` to `offset + length` of the data the text encodes (fewer at its end), decoding only those. */
function base64Reader(text: string): (offset: number, length: number) => Buffer {
  return (offset, length) => {
    const first = Math.floor(offset / 3);
    const quartets = text.slice(first * 4, Math.ceil((offset + length) / 3) * 4);
    const skip = offset - first * 3;
    return Buffer.from(quartets, "base64").subarray(skip, skip + length);
  };
}
