import type { Message } from "../../core/index.js";
import { replaceTopLevelString } from "../../text/json-splice.js";
import type { SameFormatPassthrough } from "../adapter.js";
import { coreToAnthropicMessages } from "./from-core.js";
import { unwrapMessageSignatures, wrapAnswerSignatures } from "./signatures.js";

/**
 * An Anthropic client on an Anthropic provider (invariant 8): blocks, signatures and unknown fields reach the
 * provider byte for byte, and its answer comes back as it came, only the model named as the client asked. A provider
 * whose signatures only it can take back (`signatureOwner`) gets its own out of their envelopes, and its answer's
 * signatures go to the client wrapped, whole answers as streams: in envelopes naming it and the key behind it.
 */
export const anthropicPassthrough: SameFormatPassthrough = {
  request({ body, text, clientModel, upstreamModel, stored, repaired, signatureOwner }) {
    const options = signatureOwner === undefined ? {} : { signatureOwner };
    if (repaired !== undefined) {
      const converted = coreToAnthropicMessages(repaired as Message[], options);
      return { value: { ...body, model: upstreamModel, messages: converted.value }, lossy: converted.lossy };
    }
    const clientMessages = Array.isArray(body.messages) ? body.messages : [];
    const unwrapped =
      signatureOwner === undefined ? undefined : unwrapMessageSignatures(clientMessages, signatureOwner);
    if (stored.length === 0 && unwrapped === undefined) {
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
    // Only the stored history is converted; the client's new messages still go through as sent.
    const history = coreToAnthropicMessages(stored as Message[], options);
    return {
      value: { ...body, model: upstreamModel, messages: [...history.value, ...(unwrapped ?? clientMessages)] },
      lossy: history.lossy,
    };
  },
  response: (body, { clientModel, signatureOwner, binding }) => ({
    ...(signatureOwner === undefined ? body : wrapAnswerSignatures(body, signatureOwner, binding)),
    model: clientModel,
  }),
};
