// The view face of a format: its bodies read for a person (the inspector, `parley trace show`).
// `adapter.ts` puts the faces together.
import type { Part } from "../core/index.js";

/**
 * A request or a whole answer of this API as the conversation it holds: its messages as they stand in the body,
 * each part (a block, a field) in the canonical model with the path reports name it by (`messages[3].content[1]`,
 * `messages[2].tool_calls[0]`, `choices[0].message.reasoning_content`). Lenient: a body that is not of this API,
 * or that its reader refuses, is undefined, never an error.
 */
export interface BodyView {
  request(body: unknown): ViewedBody | undefined;
  response(body: unknown): ViewedBody | undefined;
}

export interface ViewedBody {
  model?: string;
  messages: ViewedMessage[];
  /** The tools a request offers, by name. */
  tools?: string[];
}

export interface ViewedMessage {
  /** `system`, `user`, `assistant`, `tool`, `developer`: the body's own word. */
  role: string;
  /** `messages[3]`, `system`, `choices[0].message`; empty for a whole answer that is the message. */
  path: string;
  parts: ViewedPart[];
}

export interface ViewedPart {
  part: Part;
  path: string;
  /**
   * A request's part: its place (message, part) in the canonical history the request reads as, where repair
   * reports point, and where this format's request encoder reports point: its lossy paths name a part as
   * `messages[i].content[j]` (a message as `messages[i]`) for the part at [i, j] of the history it wrote from,
   * whatever the wire made of it (the inspector puts each loss at its block by this): a system prompt the encoder
   * writes as a message is that history's first message, and the wire messages or items one message became read
   * back as that one message. Absent for a system prompt in a request-level field and for answers.
   */
  at?: readonly [message: number, part: number];
}
