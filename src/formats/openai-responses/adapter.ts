import type { FormatAdapter } from "../adapter.js";
import { responsesClient } from "./client.js";
import { responsesHistory } from "./history.js";
import { responsesPassthrough } from "./passthrough.js";
import { responsesUpstream } from "./upstream.js";
import { responsesView } from "./view.js";

/** The OpenAI Responses API (`POST /v1/responses`), as OpenAI and the servers that copy it speak it. */
export const responsesAdapter: FormatAdapter<"responses"> = {
  id: "responses",
  label: "OpenAI Responses",
  client: responsesClient,
  upstream: responsesUpstream,
  history: responsesHistory,
  passthrough: responsesPassthrough,
  view: responsesView,
};
