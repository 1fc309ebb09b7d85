export type { EntryShape } from "./detect-shape.js";
export { detectShape } from "./detect-shape.js";
export { type NormalizeEntry, normalize } from "./normalize.js";
