import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";

/** What a small JSON request got back: its status and text (and the text as JSON when it is JSON). */
export interface SmallReply {
  status: number;
  text: string;
  json: unknown;
}

/** Bodies above this are not model lists; reading stops there. */
const MAX_BYTES = 16 * 1024 * 1024;

/**
 * One request outside the hot path (a server's model list, its model info), with Node's own HTTP client: the
 * upstream pool is tuned for streamed POSTs, and these few calls at start-up need none of it. Rejects with the
 * socket's error (its `code` kept) or, after `timeoutMs`, with an error whose code is `ETIMEDOUT`.
 */
export function requestJson(
  method: "GET" | "POST",
  url: string,
  headers: Record<string, string>,
  options: { body?: string; timeoutMs: number },
): Promise<SmallReply> {
  return new Promise((resolve, reject) => {
    const target = new URL(url);
    const send = target.protocol === "https:" ? httpsRequest : httpRequest;
    const outgoing = send(target, { method, headers: { accept: "application/json", ...headers } }, (response) => {
      readReply(response).then(resolve, reject);
    });
    outgoing.setTimeout(options.timeoutMs, () => {
      const error = Object.assign(new Error(`no answer within ${options.timeoutMs} ms`), { code: "ETIMEDOUT" });
      outgoing.destroy(error);
    });
    outgoing.on("error", reject);
    outgoing.end(options.body);
  });
}

function readReply(response: IncomingMessage): Promise<SmallReply> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    response.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BYTES) {
        response.destroy(new Error(`the answer is larger than ${MAX_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    response.on("error", reject);
    response.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8");
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      resolve({ status: response.statusCode ?? 0, text, json });
    });
  });
}
