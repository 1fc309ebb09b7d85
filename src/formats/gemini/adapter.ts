import type { FormatAdapter } from "../adapter.js";
import { geminiClient } from "./client.js";
import { geminiHistory } from "./history.js";
import { geminiUpstream } from "./upstream.js";
import { geminiView } from "./view.js";

/** Google's Gemini API (`generateContent`), as Google's Gemini API and Vertex AI speak it. */
export const geminiAdapter: FormatAdapter<"gemini"> = {
  id: "gemini",
  label: "Gemini generateContent",
  client: geminiClient,
  upstream: geminiUpstream,
  history: geminiHistory,
  view: geminiView,
};
