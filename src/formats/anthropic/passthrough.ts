import type { Message } from "../../core/index.js";
import { replaceTopLevelString } from "../../text/json-splice.js";
import type { SameFormatPassthrough } from "../adapter.js";
import { coreToAnthropicMessages } from "./from-core.js";

/**
 * An Anthropic client on an Anthropic provider (invariant 8): blocks, signatures and unknown fields reach the
 * provider byte for byte, and its answer comes back as it came, only the model named as the client asked.
 */
export const anthropicPassthrough: SameFormatPassthrough = {
  request({ body, text, clientModel, upstreamModel, stored, repaired }) {
    if (repaired === undefined && stored.length === 0) {
      // Nothing to repair: the client's own text goes on with only `model` spliced, numbers and escapes as sent.
      const bodyText =
        body.model !== clientModel
          ? undefined
          : upstreamModel === clientModel
            ? text
            : replaceTopLevelString(text, "model", upstreamModel);
      const value = { ...body, model: upstreamModel };
      return bodyText === undefined ? { value, lossy: [] } : { value, lossy: [], bodyText };
    }
    if (repaired === undefined) {
      // Only the stored history is converted; the client's new messages still go through as sent.
      const history = coreToAnthropicMessages(stored as Message[]);
      const clientMessages = Array.isArray(body.messages) ? body.messages : [];
      return {
        value: { ...body, model: upstreamModel, messages: [...history.value, ...clientMessages] },
        lossy: history.lossy,
      };
    }
    const converted = coreToAnthropicMessages(repaired as Message[]);
    return { value: { ...body, model: upstreamModel, messages: converted.value }, lossy: converted.lossy };
  },
  response: (body, clientModel) => ({ ...body, model: clientModel }),
  countTokensUrl: (url) => url.replace(/\/messages(\?|$)/, "/messages/count_tokens$1"),
};
