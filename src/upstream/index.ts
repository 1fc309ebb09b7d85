export { Cancellation } from "./cancellation.js";
export {
  DEFAULT_UPSTREAM_TIMEOUTS,
  UpstreamClient,
  type UpstreamClientOptions,
  type UpstreamRequest,
  type UpstreamResponse,
  type UpstreamTimeouts,
} from "./client.js";
export {
  parseRetryAfter,
  redactSecrets,
  upstreamErrorForFailure,
  upstreamErrorForStatus,
  upstreamMessage,
} from "./errors.js";
export { DEFAULT_RETRY_POLICY, type RetryPolicy, retryDelay, sleep } from "./retry.js";
