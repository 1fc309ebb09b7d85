import { type ErrorType, ParleyError } from "../../core/index.js";

/**
 * An error the gateway answers with something beside the type and message: Anthropic's `error.details`
 * (`{"error_code":"thread_not_found"}`, which the SDK acts on) or response headers (`x-should-retry: false`, which
 * the official SDKs and Claude Code read before retrying).
 */
export class AnsweredError extends ParleyError {
  readonly details: Record<string, unknown> | undefined;
  readonly headers: Record<string, string> | undefined;

  constructor(
    type: ErrorType,
    message: string,
    options: { status?: number; cause?: unknown; details?: Record<string, unknown>; headers?: Record<string, string> },
  ) {
    super(type, message, {
      ...(options.status === undefined ? {} : { status: options.status }),
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.name = "AnsweredError";
    this.details = options.details;
    this.headers = options.headers;
  }
}
