import { errorTypeForStatus, type StreamError } from "../../core/index.js";
import type { OpenAIErrorObject } from "./wire-types.js";

/**
 * An OpenAI-style error object (in a stream or a body) -> core stream error. The status comes from a
 * numeric `code` (OpenRouter), `status_code` (Groq) or `status`, else from the type's name.
 */
export function streamErrorFromOpenAI(error: unknown, fallbackStatus?: number): StreamError {
  const object = (error !== null && typeof error === "object" ? error : {}) as Partial<OpenAIErrorObject>;
  const message = typeof object.message === "string" ? object.message : JSON.stringify(error);
  const status = statusOf(object) ?? fallbackStatus;
  if (status !== undefined) return { type: errorTypeForStatus(status), message, status };
  const named = `${object.type ?? ""} ${object.code ?? ""}`;
  if (/rate_limit|quota/i.test(named)) return { type: "rate_limit_error", message, status: 429 };
  if (/overloaded|unavailable/i.test(named)) return { type: "overloaded_error", message, status: 529 };
  if (/invalid_request|bad_request/i.test(named)) return { type: "invalid_request_error", message, status: 400 };
  if (/auth/i.test(named)) return { type: "authentication_error", message, status: 401 };
  return { type: "api_error", message };
}

function statusOf(object: Record<string, unknown>): number | undefined {
  for (const key of ["status_code", "status", "code"]) {
    const value = object[key];
    const number = typeof value === "string" && /^\d{3}$/.test(value) ? Number(value) : value;
    if (typeof number === "number" && number >= 100 && number < 600) return number;
  }
  return undefined;
}
