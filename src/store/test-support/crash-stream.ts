import type { StreamEvent } from "../../core/index.js";

/** A thinking block signed only at its end, then text: `length` deltas in each. */
export function crashStreamEvents(length: number): StreamEvent[] {
  const events: StreamEvent[] = [
    { type: "message-start", id: "msg_crash", model: "test-model" },
    { type: "block-start", index: 0, part: { type: "thinking", thinking: "" } },
  ];
  for (let token = 0; token < length; token++)
    events.push({ type: "thinking-delta", index: 0, thinking: `t${token} ` });
  events.push({ type: "signature", index: 0, signature: "EqQBCgIYAh" }, { type: "block-end", index: 0 });
  events.push({ type: "block-start", index: 1, part: { type: "text", text: "" } });
  for (let token = 0; token < length; token++) events.push({ type: "text-delta", index: 1, text: `w${token} ` });
  events.push(
    { type: "block-end", index: 1 },
    {
      type: "finish",
      stopReason: { unified: "end_turn", raw: "end_turn" },
      usage: { inputTokens: 1, outputTokens: length },
    },
  );
  return events;
}

export function crashStreamText(length: number): { thinking: string; text: string } {
  let thinking = "";
  let text = "";
  for (let token = 0; token < length; token++) {
    thinking += `t${token} `;
    text += `w${token} `;
  }
  return { thinking, text };
}
