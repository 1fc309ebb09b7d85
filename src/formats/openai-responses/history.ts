import { formatPath, InvalidRequestError, type Message } from "../../core/index.js";
import type { HistoryCodec } from "../adapter.js";
import { ItemWriter } from "./items-from-core.js";
import { itemsToCore } from "./items-to-core.js";
import { isObject, parseResponsesRequest } from "./validate-request.js";
import type { ResponsesItem } from "./wire-types.js";

/** Item types only the Responses API has. */
const ITEM_TYPES = new Set([
  "message",
  "reasoning",
  "function_call",
  "function_call_output",
  "custom_tool_call",
  "custom_tool_call_output",
  "item_reference",
  "compaction",
]);

/** Content part types only the Responses API has. */
const PART_TYPES = new Set(["input_text", "output_text", "input_image", "input_file", "refusal"]);

/** A history of Responses input items. */
export const responsesHistory: HistoryCodec = {
  recognizes(item) {
    const type = item.type;
    if (typeof type === "string" && (ITEM_TYPES.has(type) || /_call(_output)?$/.test(type))) return true;
    const content = item.content;
    return (
      Array.isArray(content) &&
      content.some((part) => {
        const partType = (part as { type?: unknown } | null)?.type;
        return typeof partType === "string" && PART_TYPES.has(partType);
      })
    );
  },
  toCore(messages) {
    if (!Array.isArray(messages)) throw new InvalidRequestError("must be an array of input items", "messages");
    // The request validator checks items; its paths name `input[i]`, a history's are `messages[i]`.
    try {
      parseResponsesRequest({ model: "history", input: messages });
    } catch (error) {
      if (error instanceof InvalidRequestError && error.path?.startsWith("input"))
        throw new InvalidRequestError(error.message.slice(error.path.length + 2), `messages${error.path.slice(5)}`);
      throw error;
    }
    messages.forEach((item, index) => {
      if (!isObject(item)) throw new InvalidRequestError("must be an object", formatPath(["messages", index]));
    });
    return itemsToCore(messages as ResponsesItem[], "messages");
  },
  fromCore(messages) {
    const writer = new ItemWriter({ kind: "client" }, undefined);
    return { value: writer.messages(messages as Message[]), lossy: writer.lossy };
  },
};
