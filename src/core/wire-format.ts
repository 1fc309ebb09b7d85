/** The wire formats Parley speaks: the ids of the format registry (`src/formats/registry.ts`), which must match. */
export const WIRE_FORMATS = ["anthropic", "openai", "responses", "gemini"] as const;

export type WireFormat = (typeof WIRE_FORMATS)[number];

/**
 * Of each format, what a repair report calls a model that answered in it (where the thinking's origin names no
 * provider), and whether its thinking comes unsigned by design (a Responses reasoning item is sealed in
 * `encrypted_content`, never signed), so that unsigned thinking from it is no stream cut before its signature.
 */
export const THINKING_SOURCES: { readonly [Format in WireFormat]: { model: string; unsigned: boolean } } = {
  anthropic: { model: "an Anthropic-format model", unsigned: false },
  openai: { model: "an OpenAI-compatible model", unsigned: false },
  responses: { model: "a Responses model", unsigned: true },
  gemini: { model: "a Gemini model", unsigned: false },
};
