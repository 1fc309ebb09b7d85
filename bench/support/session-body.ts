import { claudeCodeSession } from "../../src/store/test-support/claude-code-session.js";

/**
 * A Claude Code-sized request: the last turn of a long agent session (a ~60 KB tools array, a system prompt,
 * and every tool turn so far), about 1.5 MB, streamed. Claude Code re-sends the whole of it on every turn.
 */
export function largeClaudeCodeBody(turns = LARGE_TURNS): string {
  let last = "";
  for (const turn of claudeCodeSession(turns)) last = turn.clientRequest;
  return last;
}

const LARGE_TURNS = 340;
