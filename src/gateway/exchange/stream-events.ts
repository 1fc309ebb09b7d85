import type { StreamEvent } from "../../core/index.js";

/** An event that carries the answer itself (a block's start, delta or stop), not its framing. */
export function isContent(event: StreamEvent): boolean {
  return event.type !== "message-start" && event.type !== "finish" && event.type !== "error";
}
