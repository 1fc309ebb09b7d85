/**
 * BPE counting whose cost is linear in the input, whatever the input.
 *
 * The o200k_base tokenizer first cuts text into pieces with a regular expression, then merges each piece pair by
 * pair, which is quadratic in the piece's length. A piece never crosses a boundary between whitespace and other
 * characters (but for one leading character and trailing line breaks), so a long run of one kind (80 KB of `=`,
 * a megabyte of letters or of spaces) is one piece: 1 MiB of `=` took 11 minutes. Cutting every run at
 * `MAX_RUN` characters bounds each piece, so counting is linear; ordinary text, whose runs are short, is counted
 * exactly as before, and a cut run counts at most one token more per cut.
 *
 * Beyond `EXACT_CHARACTERS` (about a second of the tokenizer's worst case) the count is scaled up from evenly
 * spaced samples, so that no request holds the tokenizer for long.
 */

/** The longest run of whitespace, or of anything else, handed to the tokenizer in one piece. */
export const MAX_RUN = 256;
/** Up to this many characters every one is counted; past it, samples are. */
export const EXACT_CHARACTERS = 1 << 20;
const SAMPLES = 16;
const SAMPLE_CHARACTERS = EXACT_CHARACTERS / SAMPLES;

export type CountText = (text: string) => number;

/** The o200k count of `text` (`count` is the tokenizer), exact up to `EXACT_CHARACTERS`, sampled beyond. */
export function countBounded(text: string, count: CountText): number {
  if (text.length <= EXACT_CHARACTERS) return countInRuns(text, count);
  let sampled = 0;
  const stride = (text.length - SAMPLE_CHARACTERS) / (SAMPLES - 1);
  for (let sample = 0; sample < SAMPLES; sample++) {
    const start = Math.floor(sample * stride);
    sampled += countInRuns(text.slice(start, start + SAMPLE_CHARACTERS), count);
  }
  return Math.round((sampled * text.length) / EXACT_CHARACTERS);
}

/** Counts `text` in segments cut inside runs longer than `MAX_RUN`, and nowhere else. */
export function countInRuns(text: string, count: CountText): number {
  let total = 0;
  let segmentStart = 0;
  let runStart = 0;
  let runIsSpace = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    const space = isRegexSpace(code);
    if (space !== runIsSpace || index === 0) {
      runIsSpace = space;
      runStart = index;
      continue;
    }
    // Never between the two halves of a surrogate pair.
    if (index - runStart >= MAX_RUN && (code < 0xdc00 || code > 0xdfff)) {
      total += count(text.slice(segmentStart, index));
      segmentStart = index;
      runStart = index;
    }
  }
  return segmentStart === 0 ? count(text) : total + count(text.slice(segmentStart));
}

/** Exactly the characters the tokenizer's `\s` matches: anything else may join a piece. */
function isRegexSpace(code: number): boolean {
  if (code < 0x80) return code === 32 || (code >= 9 && code <= 13);
  return (
    code === 0xa0 ||
    code === 0x1680 ||
    (code >= 0x2000 && code <= 0x200a) ||
    code === 0x2028 ||
    code === 0x2029 ||
    code === 0x202f ||
    code === 0x205f ||
    code === 0x3000 ||
    code === 0xfeff
  );
}
