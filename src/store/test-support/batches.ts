import type { Message } from "../../core/index.js";

/** Batch `batch` of writer `label`: three messages whose text says who wrote them and where. */
export function appendBatch(label: string, batch: number): Message[] {
  return [
    { role: "user", parts: [{ type: "text", text: `${label}/${batch}/question` }] },
    {
      role: "assistant",
      parts: [
        { type: "thinking", thinking: `${label}/${batch}/thinking`, signature: "sig" },
        { type: "tool_call", id: `${label}-${batch}`, name: "tool", input: { batch } },
      ],
    },
    { role: "user", parts: [{ type: "tool_result", toolCallId: `${label}-${batch}`, content: "ok" }] },
  ];
}

export function appendBatches(label: string, count: number): Message[][] {
  return Array.from({ length: count }, (_, batch) => appendBatch(label, batch));
}
