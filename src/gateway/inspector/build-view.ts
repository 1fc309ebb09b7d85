import { findFormat } from "../../formats/registry.js";
import { exchangeView } from "../../inspect/exchange-view.js";
import { previousView } from "../../inspect/previous-view.js";
import { redactView } from "../../store/traces/redact.js";
import type { ViewInput } from "../off-loop/protocol.js";

/**
 * An inspector view of a large trace as its route sends it, built on a prepare thread (`prepare-worker.ts`): the view
 * model (`src/inspect/`), redacted, serialised, in UTF-8 that crosses back without a copy. Reading four bodies as
 * messages, aligning them block by block and writing the view out costs time in proportion to the trace: a
 * 38.8 MB trace held the event loop 5.1 s, and `/health` with it.
 */
export function buildView(input: ViewInput): Uint8Array {
  const view =
    input.view === "exchange"
      ? exchangeView(input.trace, input.upstreamFormat === undefined ? undefined : findFormat(input.upstreamFormat))
      : previousView(input.trace, input.previous, input.earlier, input.by);
  return new TextEncoder().encode(JSON.stringify(redactView(view, input.secrets)));
}
