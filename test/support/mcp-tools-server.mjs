// A minimal MCP server on stdio (newline-delimited JSON-RPC) for the end-to-end tests: it offers two GitHub-like
// tools and answers every call with an empty list. Claude Code defers an MCP server's tools behind its tool search,
// so a model that searches for them gets `tool_reference` blocks back. Run by `node`, no dependencies.
import { createInterface } from "node:readline";

const tools = [
  {
    name: "list_issues",
    description: "List issues in a GitHub repository.",
    inputSchema: {
      type: "object",
      properties: { owner: { type: "string" }, repo: { type: "string" } },
      required: ["owner", "repo"],
    },
  },
  {
    name: "get_issue",
    description: "Get one issue of a GitHub repository.",
    inputSchema: {
      type: "object",
      properties: { owner: { type: "string" }, repo: { type: "string" }, issue_number: { type: "number" } },
      required: ["owner", "repo", "issue_number"],
    },
  },
];

const answer = (id, result) => process.stdout.write(`${JSON.stringify({ jsonrpc: "2.0", id, result })}\n`);

createInterface({ input: process.stdin }).on("line", (line) => {
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  // Notifications (`notifications/initialized`) want no answer.
  if (message === null || typeof message !== "object" || message.id === undefined) return;
  switch (message.method) {
    case "initialize":
      return answer(message.id, {
        protocolVersion: message.params?.protocolVersion ?? "2025-06-18",
        capabilities: { tools: {} },
        serverInfo: { name: "github", version: "1.0.0" },
      });
    case "tools/list":
      return answer(message.id, { tools });
    case "tools/call":
      return answer(message.id, { content: [{ type: "text", text: "[]" }] });
    default:
      return answer(message.id, {});
  }
});
