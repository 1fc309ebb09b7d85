import {
  decodeCompaction,
  decodeOriginSignature,
  encodeOriginSignature,
  type LossyEntry,
  type Message,
  type ReasoningOrigin,
} from "../../core/index.js";
import type { PassthroughRequest, SameFormatPassthrough } from "../adapter.js";
import { ItemWriter, SDK_ONLY } from "./items-from-core.js";
import { itemsToCore } from "./items-to-core.js";
import { reasoningText } from "./reasoning.js";
import type { Json, ResponsesItem, ResponsesReasoningItem } from "./wire-types.js";

/**
 * A Responses client on a Responses provider (contract invariant 14): the client's items go on as it sent them and
 * the provider's answer comes back as it came, its reasoning items' `encrypted_content` byte for byte, as invariant 8
 * holds for Anthropic. Parley's own state stays Parley's: `previous_response_id` becomes the stored items in front,
 * and the provider keeps nothing (`store: false`) and seals its reasoning (`reasoning.encrypted_content`).
 *
 * A client's `POST /v1/responses/compact` goes to the provider's own `POST /responses/compact` (`endpoint`): the same
 * items, no trigger added and nothing asked to be kept, and its `response.compaction` answer comes back as it came.
 *
 * Reasoning still goes back only to its maker. With one Responses provider (no `signatureOwner`), a sealed item the
 * client sends is taken at its word; once there are several, each one's answers reach the client wrapped in Parley's
 * envelope naming it, and only the provider it names gets the item out of it. Any other reasoning (another
 * provider's, another API's, a raw item among several providers) goes as its text, reported, as does a conversation
 * Parley compacted.
 */
export const responsesPassthrough: SameFormatPassthrough = {
  request(input) {
    const { body, upstreamModel, stored, repaired, provider } = input;
    const writer = new ItemWriter(
      { kind: "provider", reasoning: "think-tags", ...(provider === undefined ? {} : { provider }) },
      undefined,
    );
    const clientItems: ResponsesItem[] =
      typeof body.input === "string"
        ? [{ role: "user", content: body.input }]
        : Array.isArray(body.input)
          ? (body.input as ResponsesItem[])
          : [];
    const trigger = clientItems.find((item) => item.type === "compaction_trigger") ?? { type: "compaction_trigger" };
    // The provider's compaction endpoint compacts what it is given: no trigger goes with it.
    const asksTrigger = input.compact === true && input.endpoint !== "compact";
    let items: ResponsesItem[];
    if (repaired !== undefined) {
      items = writer.messages(repaired as Message[]);
      if (asksTrigger) items.push(trigger);
    } else {
      const sent = clientItems.map((item) => withoutClientFields(item, writer.lossy));
      items = [...writer.messages(stored as Message[]), ...sent.flatMap((item) => own(item, input, writer))];
      if (asksTrigger && !clientItems.includes(trigger)) items.push(trigger);
    }
    const { previous_response_id: _previous, ...rest } = body;
    const include = Array.isArray(body.include) ? (body.include as unknown[]) : [];
    // `POST /responses/compact` keeps nothing and answers no reasoning: its body is the client's, as sent.
    const keepNothing =
      input.endpoint === "compact"
        ? {}
        : {
            store: false,
            include: include.includes("reasoning.encrypted_content")
              ? include
              : [...include, "reasoning.encrypted_content"],
          };
    const value = {
      ...rest,
      model: upstreamModel,
      input: items,
      ...keepNothing,
      // the client's own cache key wins; else the conversation's
      ...(body.prompt_cache_key === undefined && input.cacheKey !== undefined
        ? { prompt_cache_key: input.cacheKey }
        : {}),
    };
    const lossy: LossyEntry[] = writer.lossy;
    return { value, lossy };
  },
  response(body, { clientModel, signatureOwner, binding, answerId }) {
    // A compaction endpoint's answer (`response.compaction`) names no model: none is added.
    const answer: Record<string, unknown> = body.model === undefined ? { ...body } : { ...body, model: clientModel };
    if (answerId !== undefined) answer.id = answerId;
    if (signatureOwner !== undefined && Array.isArray(body.output))
      answer.output = (body.output as ResponsesItem[]).map((item) =>
        wrapped(item, signatureOwner, body.model, binding),
      );
    return answer;
  },
};

/** A client's item as this provider takes it: as sent, its own reasoning out of Parley's envelope, the rest as text. */
function own(item: ResponsesItem, input: PassthroughRequest, writer: ItemWriter): ResponsesItem[] {
  if (item.type === "compaction" && decodeCompaction(sealedOf(item)) !== undefined) return asText(item, writer);
  if (item.type !== "reasoning") return [item];
  const sealed = sealedOf(item);
  const origin = decodeOriginSignature(sealed);
  if (origin === undefined) {
    // Raw sealed content: the only provider of this API made it; among several, no one can say whose it is.
    return input.signatureOwner === undefined || sealed === undefined ? [item] : asText(item, writer);
  }
  if (origin.format === "responses" && origin.provider === input.provider && origin.sealed !== undefined) {
    const { encrypted_content: _envelope, ...fields } = item;
    return [{ ...fields, ...(origin.id === undefined ? {} : { id: origin.id }), encrypted_content: origin.sealed }];
  }
  return asText(item, writer);
}

/** An item through the core model, as any other provider's request writes it (reasoning as `<think>` text). */
function asText(item: ResponsesItem, writer: ItemWriter): ResponsesItem[] {
  return writer.messages(itemsToCore([item]).messages);
}

/**
 * An item without what only the client's side had: the ids and statuses of output items a provider that keeps
 * nothing never stored (a reasoning or compaction item keeps its id, which its sealed content is bound to, as the
 * translating path sends it), and what the OpenAI SDK added to the output it gave the client (`parsed_arguments`, a text's
 * `parsed`), which a strict server refuses.
 */
/** Items whose sealed content is bound to their id. */
const SEALED_ITEMS: ReadonlySet<string> = new Set(["reasoning", "compaction"]);

function withoutClientFields(sent: ResponsesItem, lossy: LossyEntry[]): ResponsesItem {
  let item = sent;
  if (!SEALED_ITEMS.has(item.type ?? "") && (item.id !== undefined || item.status !== undefined)) {
    const { id: _id, status: _status, ...rest } = item;
    item = rest;
  }
  const strip = <T extends Record<string, unknown>>(value: T): T => {
    if (!Object.keys(value).some((key) => SDK_ONLY.has(key))) return value;
    if (!lossy.some((entry) => entry.code === "sdk-fields-dropped"))
      lossy.push({
        code: "sdk-fields-dropped",
        message: "fields the OpenAI SDK adds to the output it gives back (parsed, parsed_arguments) are no API input",
      });
    return Object.fromEntries(Object.entries(value).filter(([key]) => !SDK_ONLY.has(key))) as T;
  };
  const content = item.content;
  const own = strip(item);
  if (!Array.isArray(content)) return own;
  const parts = content.map((part) => (part !== null && typeof part === "object" ? strip(part as Json) : part));
  return parts.every((part, index) => part === content[index]) ? own : { ...own, content: parts };
}

function sealedOf(item: ResponsesItem): string | undefined {
  return typeof item.encrypted_content === "string" ? item.encrypted_content : undefined;
}

/**
 * An answer's reasoning item for a client, its sealed content in an envelope naming its provider and the key or
 * deployment behind it (`binding`), as a streamed answer's is.
 */
function wrapped(item: ResponsesItem, provider: string, model: unknown, binding: string | undefined): ResponsesItem {
  if (item.type !== "reasoning") return item;
  const reasoning = item as ResponsesReasoningItem;
  const sealed = sealedOf(reasoning);
  if (sealed === undefined || decodeOriginSignature(sealed) !== undefined) return item;
  const origin: ReasoningOrigin = { format: "responses", provider, field: reasoningText(reasoning).field };
  if (binding !== undefined) origin.binding = binding;
  if (typeof model === "string" && model !== "") origin.model = model;
  if (typeof reasoning.id === "string") origin.id = reasoning.id;
  origin.sealed = sealed;
  return { ...reasoning, encrypted_content: encodeOriginSignature(origin) };
}
