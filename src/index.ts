/**
 * Parley as a library: the canonical conversation model, every API format under the same names (`anthropic`,
 * `openai`, `responses`), streams read as events and folded into answers, repair and normalize. All of it runs in
 * Node and in a browser bundle, and pays only for what it imports (`sideEffects: false`). The store (`parley/store`) and the
 * gateway (`parley/gateway`) have subpaths of their own; `parley/codecs`, `parley/stream` and `parley/repair`
 * hold what this root gives, by job.
 */
export { checkMessages, checkRequest, checkResponse } from "./core/check.js";
export {
  type ConversationRequest,
  type ConversationResponse,
  systemText,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
} from "./core/conversation.js";
export {
  type ErrorType,
  IncompleteStreamError,
  InvalidRequestError,
  isParleyError,
  MissingPackageError,
  ParleyError,
  UpstreamError,
} from "./core/errors.js";
export type { Extra, Fields } from "./core/extra.js";
export type { Converted, LossyEntry } from "./core/lossy.js";
export {
  type DocumentPart,
  type ImagePart,
  type MediaSource,
  type Message,
  type OpaquePart,
  type Part,
  type PartType,
  type ReasoningField,
  type ReasoningOrigin,
  type RedactedThinkingPart,
  type Role,
  type TextPart,
  type ThinkingPart,
  type ToolCallPart,
  type ToolResultContentPart,
  type ToolResultPart,
  WIRE_FORMATS,
  type WireFormat,
} from "./core/parts.js";
export type { StopReason, UnifiedStopReason } from "./core/stop-reason.js";
export type { Usage } from "./core/usage.js";
export * from "./library/codecs.js";
export * from "./library/repair.js";
export * from "./library/stream.js";
