export { coreToResponsesRequest, coreToResponsesResponse, type ResponsesEncodeOptions } from "./from-core.js";
export {
  createResponsesEventDecoder,
  createResponsesStreamDecoder,
  type ResponsesDecodeOptions,
} from "./stream-decoder.js";
export { createResponsesStreamEncoder } from "./stream-encoder.js";
export { responsesRequestToCore, responsesResponseToCore } from "./to-core.js";
export { parseResponsesRequest } from "./validate-request.js";
export type * from "./wire-types.js";
