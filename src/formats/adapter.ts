import type { WireFormat } from "../core/index.js";
import type { BodyView } from "./body-view.js";
import type { ClientSide } from "./client-side.js";
import type { HistoryCodec } from "./history-codec.js";
import type { SameFormatPassthrough } from "./passthrough.js";
import type { UpstreamSide } from "./upstream-side.js";

export * from "./body-view.js";
export * from "./client-side.js";
export * from "./history-codec.js";
export * from "./passthrough.js";
export * from "./reasoning-mode.js";
export * from "./upstream-side.js";

/**
 * One API format, whole, by its faces, each in a file of its own: Parley answering clients that speak it
 * (`client`, client-side.ts), Parley calling providers that speak it (`upstream`, upstream-side.ts), its message
 * history (`history`, history-codec.ts), when a client and its provider speak it both how the client's own bytes go
 * through (`passthrough`, passthrough.ts), and its bodies read for a person (`view`, body-view.ts); the library's
 * face is `FormatCodec` (codec.ts). The gateway, the CLI and repair reach a format only through this module and the
 * registry; everything behind it lives in the format's folder.
 */
export interface FormatAdapter<Id extends WireFormat = WireFormat> {
  readonly id: Id;
  /** The API's name for messages: `Anthropic Messages`. */
  readonly label: string;
  readonly client: ClientSide;
  readonly upstream: UpstreamSide;
  readonly history: HistoryCodec;
  readonly passthrough?: SameFormatPassthrough;
  /** Its bodies read for a person (the inspector, `parley trace show`); absent, they are shown as raw JSON. */
  readonly view?: BodyView;
}
