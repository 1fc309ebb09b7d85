/**
 * Text from a trace is the client's and the upstream's, not ours: a model name can carry CR, LF or an ANSI
 * escape that would move the cursor, rewrite lines or retitle the operator's terminal, and bidirectional
 * overrides reorder what is shown. Everything the CLI prints from a trace goes through these.
 */
const CONTROLS = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;
// What JSON.stringify leaves unescaped of those: DEL, C1 and the bidirectional controls.
const JSON_UNESCAPED = /[\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** Control characters as visible escapes (`\x1b`, `\u202e`); everything else as it is. */
export function escapeControls(text: string): string {
  return text.replace(CONTROLS, (character) => {
    const code = character.charCodeAt(0);
    return code < 0x100 ? `\\x${code.toString(16).padStart(2, "0")}` : `\\u${code.toString(16).padStart(4, "0")}`;
  });
}

/** JSON that is safe on a terminal and still the same JSON: the controls JSON leaves raw become `\uXXXX`. */
export function terminalJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    JSON_UNESCAPED,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}
