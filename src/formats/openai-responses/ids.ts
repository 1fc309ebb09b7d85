import { randomHex } from "../../core/portable.js";

/** An id in OpenAI's style for what Parley itself makes: `resp_…`, `msg_…`, `rs_…`, `fc_…`, `ctc_…`. */
export function newItemId(prefix: string): string {
  return `${prefix}_${randomHex(24)}`;
}
