import type { Duplex } from "node:stream";
import { errorBody } from "./error-response.js";
import { timeOrderedId } from "./ids.js";
import { apiForPath } from "./router.js";

/**
 * What a client gets when Node's HTTP parser refuses its request before any handler runs (a request line and
 * headers over 16 KB, bytes that are not HTTP, a request cut short): the status that says why and an error body
 * in the route's shape, as for any other refusal, instead of a bare `400` with nothing to read.
 */
export function answerClientError(error: Error & { code?: string; rawPacket?: Buffer }, socket: Duplex): void {
  if (!socket.writable || error.code === "ECONNRESET") return;
  const [status, message] = describe(error.code);
  const requestId = timeOrderedId("req_");
  const body = JSON.stringify(
    errorBody(
      apiForPath(requestPath(error.rawPacket)),
      { status, type: "invalid_request_error", message, param: null },
      requestId,
    ),
  );
  socket.end(
    `HTTP/1.1 ${status} ${REASONS[status]}\r\nconnection: close\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\nrequest-id: ${requestId}\r\nx-request-id: ${requestId}\r\n\r\n${body}`,
  );
}

const REASONS: Record<number, string> = {
  400: "Bad Request",
  408: "Request Timeout",
  431: "Request Header Fields Too Large",
};

function describe(code: string | undefined): [number, string] {
  switch (code) {
    case "HPE_HEADER_OVERFLOW":
      return [431, "the request line and headers are larger than 16 KB (a URL that long is refused)"];
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return [408, "the request was not received in time"];
    case "HPE_INVALID_EOF_STATE":
      return [400, "the request ended before it was complete"];
    default:
      return [400, `the request is not valid HTTP (${code ?? "unknown parse error"})`];
  }
}

/** The path of the request line the parser saw, when it saw one (for the error's shape). */
function requestPath(packet: Buffer | undefined): string {
  const line = packet?.subarray(0, 512).toString("latin1") ?? "";
  return /^[A-Z]+ (\/[^ ?\r\n]*)/.exec(line)?.[1] ?? "/";
}
