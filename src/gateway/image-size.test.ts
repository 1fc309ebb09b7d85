import { deflateSync } from "node:zlib";
import { describe, expect, test } from "vitest";
import { imageSize } from "./image-size.js";
import { imageTokens } from "./token-count.js";

/** A whole, valid PNG of `width` x `height` grey pixels. */
function png(width: number, height: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    // The CRC is not checked by the reader; a real encoder's is left out for brevity.
    return Buffer.concat([length, Buffer.from(type, "latin1"), data, Buffer.alloc(4)]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 0, 0, 0, 0], 8);
  const rows = Buffer.alloc((width + 1) * height, 0x80);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/** A JPEG's head as cameras write it: JFIF, a large EXIF segment, a quantisation table, then the frame. */
function jpeg(width: number, height: number, frameMarker = 0xc0): Buffer {
  const segment = (marker: number, data: Buffer) => {
    const head = Buffer.from([0xff, marker, 0, 0]);
    head.writeUInt16BE(data.length + 2, 2);
    return Buffer.concat([head, data]);
  };
  const frame = Buffer.alloc(15);
  frame[0] = 8;
  frame.writeUInt16BE(height, 1);
  frame.writeUInt16BE(width, 3);
  frame[5] = 3;
  return Buffer.concat([
    Buffer.from([0xff, 0xd8]),
    segment(0xe0, Buffer.from("JFIF\0\x01\x01\0\0\x01\0\x01\0\0", "latin1")),
    segment(0xe1, Buffer.alloc(40_000, 0x45)),
    Buffer.from([0xff]), // a fill byte
    segment(0xdb, Buffer.alloc(65, 1)),
    segment(frameMarker, frame),
    Buffer.from([0xff, 0xda, 0, 2, 0xff, 0xd9]),
  ]);
}

function gif(width: number, height: number): Buffer {
  const head = Buffer.alloc(13);
  head.write("GIF89a", 0, "latin1");
  head.writeUInt16LE(width, 6);
  head.writeUInt16LE(height, 8);
  return head;
}

function webp(kind: "VP8 " | "VP8L" | "VP8X", width: number, height: number): Buffer {
  const data = Buffer.alloc(30);
  data.write("RIFF", 0, "latin1");
  data.writeUInt32LE(22, 4);
  data.write("WEBP", 8, "latin1");
  data.write(kind, 12, "latin1");
  if (kind === "VP8 ") {
    data.set([0x9d, 0x01, 0x2a], 23);
    data.writeUInt16LE(width, 26);
    data.writeUInt16LE(height, 28);
  } else if (kind === "VP8L") {
    data[20] = 0x2f;
    data.writeUInt32LE(((height - 1) << 14) | (width - 1), 21);
  } else {
    data.writeUIntLE(width - 1, 24, 3);
    data.writeUIntLE(height - 1, 27, 3);
  }
  return data;
}

const base64 = (bytes: Buffer) => bytes.toString("base64");

describe("an image's size, from its header inside the base64 text", () => {
  test.each([
    ["PNG", png(1092, 1092), { width: 1092, height: 1092 }],
    ["PNG, 1 x 1 (the llama.cpp fixture's)", png(1, 1), { width: 1, height: 1 }],
    ["JPEG behind a 40 KB EXIF segment", jpeg(1920, 1080), { width: 1920, height: 1080 }],
    ["progressive JPEG", jpeg(640, 480, 0xc2), { width: 640, height: 480 }],
    ["GIF", gif(200, 200), { width: 200, height: 200 }],
    ["WebP (lossy)", webp("VP8 ", 800, 600), { width: 800, height: 600 }],
    ["WebP (lossless)", webp("VP8L", 1000, 1000), { width: 1000, height: 1000 }],
    ["WebP (extended)", webp("VP8X", 4000, 3000), { width: 4000, height: 3000 }],
  ])("%s", (_name, bytes, size) => {
    expect(imageSize(base64(bytes))).toEqual(size);
  });

  test("at any offset of the header within the base64 quartets, the same", () => {
    // Each JPEG segment is read where it begins, at offsets that fall anywhere in a base64 quartet.
    for (let padding = 0; padding < 3; padding++) {
      const bytes = jpeg(1000 + padding, 500);
      expect(imageSize(base64(bytes))).toEqual({ width: 1000 + padding, height: 500 });
    }
  });

  test("not an image, cut short, or a JPEG without a frame: undefined", () => {
    expect(imageSize(base64(Buffer.from("%PDF-1.7 not an image at all")))).toBeUndefined();
    expect(imageSize(base64(png(10, 10).subarray(0, 12)))).toBeUndefined();
    expect(imageSize(base64(jpeg(10, 10).subarray(0, 30_000)))).toBeUndefined();
    expect(imageSize("")).toBeUndefined();
    expect(imageSize("!!!! not base64 ????")).toBeUndefined();
  });
});

describe("an image's tokens, by Anthropic's formula (width x height / 750, scaled, capped)", () => {
  const image = (bytes: Buffer) => ({ type: "base64" as const, mediaType: "image/png", data: base64(bytes) });

  // Anthropic's vision guide, "Calculate image costs": 200x200 ~54, 1000x1000 ~1334, 1092x1092 ~1590 tokens.
  test.each([
    [200, 200, 54],
    [1000, 1000, 1334],
    [1092, 1092, 1590],
  ])("%i x %i: %i, as the guide's table says", (width, height, tokens) => {
    expect(imageTokens(image(png(width, height)))).toBe(tokens);
  });

  test("a long edge over 1,568 px is scaled down to it first; the most is 1,600", () => {
    // 3000 x 600 is scaled to 1568 x 313.6: 656 tokens, not the 2,400 of its own size.
    expect(imageTokens(image(gif(3000, 600)))).toBe(656);
    // A 1080p screenshot is scaled to 1568 x 882, past the cap.
    expect(imageTokens(image(jpeg(1920, 1080)))).toBe(1_600);
    expect(imageTokens(image(webp("VP8X", 4000, 3000)))).toBe(1_600);
  });

  test("an image whose size cannot be known counts the most an image costs", () => {
    expect(imageTokens({ type: "url", url: "https://example.com/cat.png" })).toBe(1_600);
    expect(imageTokens({ type: "base64", mediaType: "image/heic", data: base64(Buffer.alloc(64, 7)) })).toBe(1_600);
  });
});
