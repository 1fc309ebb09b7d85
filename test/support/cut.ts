/**
 * `whole` cut where a property test's drawn naturals say (each taken modulo the length + 1, a repeated point
 * once, in order): the pieces, empty ones included, whose concatenation is `whole`. Bytes are cut as views.
 */
export function cutAt<T extends string | Uint8Array>(whole: T, points: readonly number[]): T[] {
  const ends = [...new Set(points.map((point) => point % (whole.length + 1)))].sort((a, b) => a - b);
  const pieces: T[] = [];
  let start = 0;
  for (const end of [...ends, whole.length]) {
    pieces.push((typeof whole === "string" ? whole.slice(start, end) : whole.subarray(start, end)) as T);
    start = end;
  }
  return pieces;
}
