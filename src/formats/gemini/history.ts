import type { Message } from "../../core/index.js";
import type { HistoryCodec } from "../adapter.js";
import { ContentsWriter } from "./contents-from-core.js";
import { contentsToCore } from "./contents-to-core.js";
import { clientReader } from "./to-core.js";
import { checkContents } from "./validate-request.js";

/** A history of Gemini contents (`{role, parts}`). */
export const geminiHistory: HistoryCodec = {
  recognizes: (message) => message.role === "model" || Array.isArray(message.parts),
  toCore(messages) {
    checkContents(messages, ["messages"]);
    return contentsToCore(messages, clientReader, "messages");
  },
  fromCore(messages, options = {}) {
    const reasoning = options.reasoning ?? options.provider?.reasoning;
    const writer = new ContentsWriter(
      options.signOriginThinking === true
        ? { kind: "client" }
        : {
            kind: "provider",
            reasoning: reasoning === "drop" ? "drop" : "think-tags",
            ...(options.provider === undefined ? {} : { provider: options.provider.name }),
          },
    );
    return { value: writer.contents(messages as Message[]), lossy: writer.lossy };
  },
};
