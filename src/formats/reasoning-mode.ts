/** How thinking is written to an API that has no signed thinking blocks (see `--reasoning`). */
export const REASONING_MODES = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"] as const;

export type ReasoningMode = (typeof REASONING_MODES)[number];
