export { Cancellation } from "./cancellation.js";
export {
  DEFAULT_MAX_ANSWER_BYTES,
  DEFAULT_UPSTREAM_TIMEOUTS,
  ERROR_BODY_BYTES,
  UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamRequest,
  type UpstreamResponse,
  type UpstreamTimeouts,
  type UpstreamWholeResponse,
} from "./client.js";
export {
  isUnreachable,
  parseRetryAfter,
  redactSecrets,
  upstreamErrorForFailure,
  upstreamErrorForStatus,
  upstreamMessage,
} from "./errors.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay, sleep } from "./retry.js";
