export { CONTINUE_TEXT } from "./alternate-roles.js";
export { INTERRUPTED_RESULT_TEXT } from "./close-orphaned-tool-calls.js";
export { isForeignThinking } from "./foreign-thinking-to-text.js";
export type { RepairAction, RepairEntry, RepairTarget, Violation } from "./history.js";
export { detectShape, type EntryShape, type NormalizeEntry, normalize } from "./normalize/index.js";
export { repair, validateFor } from "./pipeline.js";
export { MISSING_REASONING_TEXT } from "./reasoning-on-tool-turns.js";
export { validateAnthropic } from "./validate-anthropic.js";
export { validateOpenAI } from "./validate-openai.js";
