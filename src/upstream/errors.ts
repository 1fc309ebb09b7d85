import { type ErrorType, UpstreamError } from "../core/index.js";
import { contextOverflowIn } from "./context-overflow.js";

/** The statuses a context overflow comes with, server by server. */
const OVERFLOW_STATUSES: ReadonlySet<number> = new Set([400, 413, 422, 500]);

/**
 * 500s whose message says the request itself is at fault: the same request gets the same answer, so it is not
 * retried, and the client gets a 400 in the server's words. A server that words it so is one row.
 */
const REQUEST_AT_FAULT: ReadonlyArray<{ server: string; pattern: RegExp }> = [
  // "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj" (and audio,
  // video): a model without a projector for that input.
  { server: "llama.cpp", pattern: /\b(?:image|audio|video) input is not supported\b/ },
  // nlohmann::json's messages, when the request's JSON does not parse or a field has the wrong type.
  { server: "llama.cpp", pattern: /\[json\.exception\.(?:parse_error|type_error|out_of_range)\.\d+\]/ },
];

/**
 * Upstream failures mapped to the client's error vocabulary. An upstream's 401/403 is Parley's credential
 * problem, not the client's, so it becomes an `api_error`; the upstream's own message is kept because it says
 * what to fix.
 */
export function upstreamErrorForStatus(
  status: number,
  bodyText: string,
  options: { retryAfterMs?: number; secrets?: readonly string[]; location?: string } = {},
): UpstreamError {
  const detail = redactSecrets(upstreamMessage(bodyText) ?? `status ${status}`, options.secrets ?? []);
  const retryAfter = options.retryAfterMs === undefined ? {} : { retryAfterMs: options.retryAfterMs };
  const base = { upstreamStatus: status, body: redactSecrets(bodyText, options.secrets ?? []), ...retryAfter };
  const make = (type: ErrorType, message: string, retryable: boolean, clientStatus?: number) =>
    new UpstreamError(type, message, {
      ...base,
      retryable,
      ...(clientStatus === undefined ? {} : { status: clientStatus }),
    });
  // A redirect is the gateway's setting at fault (a base URL without its path, http for https), never the client's.
  if (status >= 300 && status < 400) {
    const to = options.location === undefined ? "" : ` to ${redactSecrets(options.location, options.secrets ?? [])}`;
    return make(
      "api_error",
      `upstream redirected the request (${status})${to}: set the provider's URL to where it points`,
      false,
      502,
    );
  }
  // A prompt over the window, in the upstream's words (some servers say it with a 413, 422 or 500): never retried,
  // and the client gets its own API's words for it, numbers kept.
  const overflow = OVERFLOW_STATUSES.has(status) ? contextOverflowIn(bodyText) : undefined;
  if (overflow !== undefined)
    return new UpstreamError("invalid_request_error", `upstream: ${detail}`, {
      ...base,
      retryable: false,
      status: 400,
      contextOverflow: overflow,
    });
  if (status === 429) return make("rate_limit_error", `upstream rate limit: ${detail}`, true);
  if (status === 503 || status === 529) return make("overloaded_error", `upstream overloaded: ${detail}`, true);
  if (status === 401 || status === 403) {
    return make("api_error", `upstream rejected the gateway's credentials (${status}): ${detail}`, false, 500);
  }
  if (status === 404) return make("not_found_error", `upstream: ${detail}`, false);
  if (status === 413) return make("request_too_large", `upstream: ${detail}`, false);
  if (status === 408 || status === 504) return make("timeout_error", `upstream timed out (${status}): ${detail}`, true);
  if (status === 500 && REQUEST_AT_FAULT.some((wording) => wording.pattern.test(detail)))
    return make("invalid_request_error", `upstream: ${detail}`, false, 400);
  if (status >= 500) return make("api_error", `upstream error (${status}): ${detail}`, true, 500);
  return make("invalid_request_error", `upstream: ${detail}`, false, 400);
}

/**
 * The error message in an OpenAI (`{error:{message}}`), Anthropic (`{type:"error",error:{message}}`) or plain body, or
 * in the first of an array of them (Google's OpenAI-compatible endpoint answers `[{"error":{...}}]`).
 */
export function upstreamMessage(bodyText: string): string | undefined {
  const trimmed = bodyText.trim();
  if (trimmed === "") return undefined;
  try {
    const parsed: unknown = JSON.parse(trimmed);
    const message = findMessage(parsed);
    if (message !== undefined) return message;
  } catch {
    // not JSON: the text itself is the message
  }
  return trimmed.length > 500 ? `${trimmed.slice(0, 500)}…` : trimmed;
}

function findMessage(value: unknown): string | undefined {
  if (Array.isArray(value)) return findMessage(value[0]);
  if (value === null || typeof value !== "object") return typeof value === "string" ? value : undefined;
  const record = value as Record<string, unknown>;
  if (typeof record.message === "string") return record.message;
  if (typeof record.error === "string") return record.error;
  if (typeof record.detail === "string") return record.detail;
  if (record.error !== undefined) return findMessage(record.error);
  return undefined;
}

/** Failures where nothing answers at the address: waiting and sending again changes nothing. */
const UNREACHABLE = new Set(["ECONNREFUSED", "ENOTFOUND", "EAI_AGAIN", "EHOSTUNREACH", "ENETUNREACH"]);

/** Whether a failure (or what caused it) is that nothing answers at the upstream's address. */
export function isUnreachable(error: unknown): boolean {
  const code = errorCode(error);
  return code !== undefined && UNREACHABLE.has(code);
}

/** Failures that never produced a status: refused connections, resets, timeouts. */
export function upstreamErrorForFailure(error: unknown, secrets: readonly string[] = []): UpstreamError {
  const code = errorCode(error);
  const reason = redactSecrets(error instanceof Error ? error.message : String(error), secrets);
  switch (code) {
    case "UND_ERR_CONNECT_TIMEOUT":
      return new UpstreamError("timeout_error", `upstream connect timeout: ${reason}`, {
        retryable: true,
        cause: error,
      });
    case "UND_ERR_HEADERS_TIMEOUT":
      return new UpstreamError("timeout_error", "upstream sent no response in time (first-byte timeout)", {
        retryable: true,
        cause: error,
      });
    case "UND_ERR_BODY_TIMEOUT":
      return new UpstreamError("timeout_error", "upstream went silent (idle timeout)", {
        retryable: false,
        cause: error,
      });
    default:
      if (isUnreachable(error)) {
        return new UpstreamError("api_error", `upstream unreachable: ${reason}`, {
          retryable: true,
          status: 502,
          cause: error,
        });
      }
      return new UpstreamError("api_error", `upstream connection failed: ${reason}`, {
        retryable: code === "ECONNRESET" || code === "UND_ERR_SOCKET" || code === "EPIPE",
        status: 502,
        cause: error,
      });
  }
}

/**
 * A failure while a whole (non-streamed) answer arrives: nothing has reached the client yet, so the idle timeout
 * is retried as the first-byte timeout is (a reset already is).
 */
export function retriedInWholeAnswer(error: UpstreamError): UpstreamError {
  if (error.retryable || errorCode(error.cause) !== "UND_ERR_BODY_TIMEOUT") return error;
  return new UpstreamError("timeout_error", "upstream went silent before its answer was complete (idle timeout)", {
    retryable: true,
    cause: error.cause,
  });
}

function errorCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== null && typeof current === "object"; depth++) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === "string") return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** `Retry-After` as seconds or an HTTP date, in milliseconds; undefined when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === "") return undefined;
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Math.round(Number(trimmed) * 1000);
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return undefined;
  return Math.max(0, date - now);
}

/** Removes every configured secret from text bound for a log, trace or client. */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const secret of secrets) {
    if (secret.length >= 4 && out.includes(secret)) out = out.split(secret).join("[redacted]");
  }
  return out;
}
