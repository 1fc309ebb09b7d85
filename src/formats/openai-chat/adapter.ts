import type { FormatAdapter } from "../adapter.js";
import { openaiChatClient } from "./client.js";
import { openaiChatHistory } from "./history.js";
import { openaiChatUpstream } from "./upstream.js";
import { openaiChatView } from "./view.js";

/** OpenAI Chat Completions, as OpenAI and every OpenAI-compatible server speak it. */
export const openaiChatAdapter: FormatAdapter<"openai"> = {
  id: "openai",
  label: "OpenAI Chat Completions",
  client: openaiChatClient,
  upstream: openaiChatUpstream,
  history: openaiChatHistory,
  view: openaiChatView,
};
