import { InvalidRequestError, ParleyError } from "../../core/index.js";
import type { Context } from "./context.js";

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads and parses a JSON request body. Bad input is a 4xx naming what is wrong: more than `limit` bytes is a
 * 413 (reading stops as soon as the limit is passed, and the connection is closed after the answer), bytes that
 * are not UTF-8 or text that is not JSON a 400. Any content-type is accepted when the body is JSON.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const declared = Number(ctx.req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(ctx, limit);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of ctx.req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) throw tooLarge(ctx, limit);
    chunks.push(chunk);
  }
  if (size === 0) throw new InvalidRequestError("request body is empty; expected a JSON object", "body");
  const bytes = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    throw new InvalidRequestError("request body is not valid UTF-8", "body");
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(error as Error).message}`, "body");
  }
}

function tooLarge(ctx: Context, limit: number): ParleyError {
  // The rest of the body is never read: answer, then drop the connection.
  ctx.res.setHeader("connection", "close");
  // The socket is detached from the request once the response finishes, so hold on to it now.
  const socket = ctx.req.socket;
  ctx.res.once("finish", () => socket?.destroy());
  return new ParleyError("request_too_large", `request body is larger than the limit of ${limit} bytes`);
}

/** The body as a JSON object, or a 400 saying what it was instead. */
export function expectObject(value: unknown, path = "body"): Record<string, unknown> {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new InvalidRequestError(`must be a JSON object, not ${describe(value)}`, path);
  }
  return value as Record<string, unknown>;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "string" ? "a string" : typeof value;
}
