/**
 * Where Google's OpenAI-compatible endpoints carry a thought signature: `extra_content.google` (the Gemini API) or
 * `extra_content.vertex` (Vertex AI). A file of its own so that a stream decoder reading them does not bring in
 * the presets' table.
 */
export const THOUGHT_SIGNATURE_KEYS = ["google", "vertex"] as const;
export type ThoughtSignatureKey = (typeof THOUGHT_SIGNATURE_KEYS)[number];
