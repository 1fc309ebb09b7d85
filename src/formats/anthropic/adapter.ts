import type { FormatAdapter } from "../adapter.js";
import { anthropicClient } from "./client.js";
import { anthropicHistory } from "./history.js";
import { anthropicPassthrough } from "./passthrough.js";
import { anthropicUpstream } from "./upstream.js";
import { anthropicView } from "./view.js";

/** The Anthropic Messages API. */
export const anthropicAdapter: FormatAdapter<"anthropic"> = {
  id: "anthropic",
  label: "Anthropic Messages",
  client: anthropicClient,
  upstream: anthropicUpstream,
  history: anthropicHistory,
  passthrough: anthropicPassthrough,
  view: anthropicView,
};
