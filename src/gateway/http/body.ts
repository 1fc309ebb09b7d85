import { isUtf8 } from "node:buffer";
import { InvalidRequestError, ParleyError } from "../../core/index.js";
import { jsonNestsDeeperThan, MAX_JSON_DEPTH } from "../../text/json-depth.js";
import type { Context } from "./context.js";

/**
 * Reads and parses a JSON request body. Bad input is a 4xx naming what is wrong: a content type that is not
 * JSON's a 415 (a web page can send text/plain or a form to any address without asking first, see
 * `browser-guard.ts`), more than `limit` bytes a 413 (reading stops as soon as the limit is passed, and the
 * connection is closed after the answer), bytes that are not UTF-8, text that is not JSON or JSON nested deeper
 * than `MAX_JSON_DEPTH` a 400.
 */
export async function readJsonBody(ctx: Context, limit: number): Promise<unknown> {
  return (await readJsonBodyText(ctx, limit)).value;
}

/** The body parsed, and its text as sent (for a body that may go on unchanged). */
export async function readJsonBodyText(ctx: Context, limit: number): Promise<{ value: unknown; text: string }> {
  return parseJsonText(await readJsonText(ctx, limit));
}

/** The body's text, checked as `readJsonBody` checks it but not yet parsed (a large one is parsed off the loop). */
export async function readJsonText(ctx: Context, limit: number): Promise<string> {
  requireJsonContentType(ctx);
  const declared = Number(ctx.req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(ctx, limit);
  const bytes = await readBytes(ctx, limit);
  if (bytes.length === 0) throw new InvalidRequestError("request body is empty; expected a JSON object", "body");
  return utf8Text(bytes);
}

/** A body that may be absent (no length, not chunked) or empty: undefined then, else as `readJsonBody`. */
export async function readOptionalJsonBody(ctx: Context, limit: number): Promise<unknown> {
  const length = ctx.req.headers["content-length"];
  if ((length === undefined || length === "0") && ctx.req.headers["transfer-encoding"] === undefined) {
    return undefined;
  }
  const declared = Number(length);
  if (Number.isFinite(declared) && declared > limit) throw tooLarge(ctx, limit);
  const bytes = await readBytes(ctx, limit);
  if (bytes.length === 0) return undefined;
  requireJsonContentType(ctx);
  return parseJsonBytes(bytes).value;
}

const JSON_CONTENT_TYPE = /^\s*application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

function requireJsonContentType(ctx: Context): void {
  const type = ctx.req.headers["content-type"];
  if (type !== undefined && JSON_CONTENT_TYPE.test(type)) return;
  throw new ParleyError(
    "invalid_request_error",
    `content-type must be application/json, not ${type === undefined ? "absent" : `'${type.slice(0, 100)}'`}`,
    { status: 415 },
  );
}

function parseJsonBytes(bytes: Buffer): { value: unknown; text: string } {
  return parseJsonText(utf8Text(bytes));
}

function utf8Text(bytes: Buffer): string {
  if (!isUtf8(bytes)) throw new InvalidRequestError("request body is not valid UTF-8", "body");
  return bytes.toString("utf8");
}

/** A body's text as JSON: a 400 for text nested deeper than `MAX_JSON_DEPTH` or that is not JSON. */
export function parseJsonText(text: string): { value: unknown; text: string } {
  if (jsonNestsDeeperThan(text)) {
    throw new InvalidRequestError(`request body nests arrays and objects deeper than ${MAX_JSON_DEPTH} levels`, "body");
  }
  try {
    return { value: JSON.parse(text), text };
  } catch (error) {
    throw new InvalidRequestError(`request body is not valid JSON: ${(error as Error).message}`, "body");
  }
}

/** The body's bytes, with events rather than an async iterator (a request is a chunk or two). */
function readBytes(ctx: Context, limit: number): Promise<Buffer> {
  const req = ctx.req;
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        finish();
        req.pause();
        reject(tooLarge(ctx, limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      finish();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (error: Error) => {
      finish();
      reject(error);
    };
    const onClose = () => {
      finish();
      reject(new Error("the client closed the connection before sending the whole body"));
    };
    const finish = () => {
      req.off("data", onData);
      req.off("end", onEnd);
      req.off("error", onError);
      req.off("close", onClose);
    };
    req.on("data", onData);
    req.on("end", onEnd);
    req.on("error", onError);
    req.on("close", onClose);
  });
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
