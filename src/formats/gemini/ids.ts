import { randomHex } from "../../core/portable.js";

/** An answer id for an answer that came without one (`responseId`). */
export function newAnswerId(): string {
  return `gen_${randomHex(12)}`;
}
