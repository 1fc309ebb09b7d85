import type { ViewedMessage } from "../formats/adapter.js";
import type { TraceRecord } from "../store/traces/trace-store.js";
import type { SideBlocks } from "./align.js";
import type { Block, MessageHead, Note } from "./view-types.js";

interface Sides {
  clientRequest: SideBlocks;
  upstreamRequest: SideBlocks;
  clientResponse: SideBlocks;
  upstreamResponse: SideBlocks;
}

/** The request bodies read as messages, each part at its place (`at`) in the history it reads as. */
interface RequestMessages {
  client: readonly ViewedMessage[];
  upstream: readonly ViewedMessage[];
}

/**
 * Puts every lossy and repair entry on the block (or message) it names, and returns those that name none.
 * Reading the client's request reports client paths; writing the upstream request reports the place in the
 * history it wrote from (`messages[6].content[0]`), which is where the upstream body's view puts that part (`at`),
 * whatever the wire made of it (a tool message, a field); the answer's entries name a place in the upstream's
 * answer or the client's. A trace that does not say which entries came from which stage is placed by path alone.
 * A repair entry names a message and part of the history repair was given (stored messages first, then the
 * client's): the client's block read at that place.
 */
export function placeNotes(trace: TraceRecord, requests: RequestMessages, sides: Sides): Note[] {
  const unplaced: Note[] = [];
  const atUpstream = byPlace(requests.upstream, sides.upstreamRequest);
  const stages = trace.lossyStages;
  (trace.lossy ?? []).forEach((entry, index) => {
    const note: Note = { kind: "lossy", code: entry.code, message: entry.message };
    if (entry.path !== undefined) note.path = entry.path;
    const path = entry.path ?? "";
    const stage =
      stages === undefined
        ? "any"
        : index < stages.clientRequest
          ? "clientRequest"
          : index < stages.clientRequest + stages.upstreamRequest
            ? "upstreamRequest"
            : "response";
    let place: Block | MessageHead | undefined;
    if (path !== "") {
      if (stage === "clientRequest") place = findPlace([sides.clientRequest], path);
      else if (stage === "upstreamRequest") {
        place = placeOf(atUpstream, path) ?? findPlace([sides.upstreamRequest], path);
      } else if (stage === "any") place = findPlace([sides.clientRequest, sides.upstreamRequest], path);
      if (stage === "response" || stage === "any") {
        place ??= findPlace(
          [sides.upstreamResponse, sides.clientResponse],
          path.replace(/^(response\.)?(message\.)?/, ""),
        );
      }
    }
    if (place === undefined) unplaced.push(note);
    else place.notes.push(note);
  });
  const stored = trace.storedMessages ?? 0;
  const atClient = byPlace(requests.client, sides.clientRequest);
  for (const entry of trace.repair ?? []) {
    const { action, reason, messageIndex, partIndex } = entry as {
      action?: unknown;
      reason?: unknown;
      messageIndex?: unknown;
      partIndex?: unknown;
    };
    const note: Note = { kind: "repair", code: String(action ?? "repair"), message: String(reason ?? "") };
    if (typeof messageIndex !== "number") {
      unplaced.push(note);
      continue;
    }
    const index = messageIndex - stored;
    note.path =
      index < 0
        ? `stored history messages[${messageIndex}]`
        : typeof partIndex === "number"
          ? `messages[${index}].content[${partIndex}]`
          : `messages[${index}]`;
    const place =
      index < 0
        ? undefined
        : typeof partIndex === "number"
          ? (atClient.parts.get(`${index}:${partIndex}`) ?? atClient.messages.get(index))
          : atClient.messages.get(index);
    if (place === undefined) unplaced.push(note);
    else place.notes.push(note);
  }
  return unplaced;
}

interface Places {
  parts: Map<string, Block>;
  messages: Map<number, MessageHead>;
}

/** A body's blocks by their place in the history it reads as, and the heading of each history message. */
function byPlace(messages: readonly ViewedMessage[], side: SideBlocks): Places {
  const places: Places = { parts: new Map(), messages: new Map() };
  messages.forEach((message, index) => {
    message.parts.forEach((viewed, part) => {
      if (viewed.at === undefined) return;
      places.parts.set(`${viewed.at[0]}:${viewed.at[1]}`, side.blocks[index]![part]!);
      if (!places.messages.has(viewed.at[0])) places.messages.set(viewed.at[0], side.heads[index]!);
    });
  });
  return places;
}

/** `messages[6].content[0]...` as a place in the history: its block, or its message's heading. */
function placeOf(places: Places, path: string): Block | MessageHead | undefined {
  const match = /^messages\[(\d+)\](?:\.content\[(\d+)\])?/.exec(path);
  if (match === null) return undefined;
  const message = Number(match[1]);
  const part = match[2] === undefined ? undefined : places.parts.get(`${message}:${match[2]}`);
  return part ?? places.messages.get(message);
}

/** The block or message whose path is the longest that `path` starts with, on the first side that has one. */
function findPlace(sides: readonly SideBlocks[], path: string): Block | MessageHead | undefined {
  for (const side of sides) {
    let best: Block | MessageHead | undefined;
    // A block whose path is its message's (a Responses item that is one part) holds what names that path.
    const consider = (place: Block | MessageHead, isBlock: boolean) => {
      if (place.path === "" || !within(path, place.path)) return;
      const longer = best === undefined || place.path.length > best.path.length;
      if (longer || (isBlock && place.path.length === best!.path.length)) best = place;
    };
    side.heads.forEach((head, index) => {
      consider(head, false);
      for (const block of side.blocks[index]!) consider(block, true);
    });
    if (best !== undefined) return best;
  }
  return undefined;
}

function within(path: string, prefix: string): boolean {
  return path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);
}
