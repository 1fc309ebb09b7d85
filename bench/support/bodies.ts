/**
 * A request in the shape Claude Code sends mid-session: a system prompt of two blocks with cache_control,
 * eleven messages with four tool_use/tool_result pairs, five tools. About 6.5 KB of JSON.
 */

const tool = (name: string, description: string, properties: Record<string, unknown>, required: string[]) => ({
  name,
  description,
  input_schema: { type: "object", properties, required, additionalProperties: false },
});

const tools = [
  tool(
    "Bash",
    "Executes a given bash command in a persistent shell session with optional timeout, ensuring proper handling and security measures.",
    {
      command: { type: "string", description: "The command to execute" },
      timeout: { type: "number", description: "Optional timeout in milliseconds (max 600000)" },
      description: {
        type: "string",
        description: "Clear, concise description of what this command does in 5-10 words",
      },
    },
    ["command"],
  ),
  tool(
    "Read",
    "Reads a file from the local filesystem. The file_path parameter must be an absolute path, not a relative path.",
    {
      file_path: { type: "string", description: "The absolute path to the file to read" },
      offset: { type: "number", description: "The line number to start reading from" },
      limit: { type: "number", description: "The number of lines to read" },
    },
    ["file_path"],
  ),
  tool(
    "Edit",
    "Performs exact string replacements in files. You must use your Read tool at least once before editing.",
    {
      file_path: { type: "string", description: "The absolute path to the file to modify" },
      old_string: { type: "string", description: "The text to replace" },
      new_string: { type: "string", description: "The text to replace it with" },
      replace_all: { type: "boolean", description: "Replace all occurrences of old_string (default false)" },
    },
    ["file_path", "old_string", "new_string"],
  ),
  tool(
    "Glob",
    "Fast file pattern matching tool that works with any codebase size. Returns matching file paths sorted by modification time.",
    {
      pattern: { type: "string", description: "The glob pattern to match files against" },
      path: { type: "string", description: "The directory to search in" },
    },
    ["pattern"],
  ),
  tool(
    "Grep",
    "A powerful search tool built on ripgrep. Supports full regex syntax and filtering files with the glob parameter.",
    {
      pattern: { type: "string", description: "The regular expression pattern to search for in file contents" },
      path: { type: "string", description: "File or directory to search in" },
      glob: { type: "string", description: "Glob pattern to filter files" },
      output_mode: { type: "string", enum: ["content", "files_with_matches", "count"] },
    },
    ["pattern"],
  ),
];

const system = [
  {
    type: "text",
    text: "You are Claude Code, Anthropic's official CLI for Claude.",
    cache_control: { type: "ephemeral" },
  },
  {
    type: "text",
    text: [
      "You are an interactive CLI tool that helps users with software engineering tasks.",
      "Use the instructions below and the tools available to you to assist the user.",
      "Keep your responses short. Prefer editing existing files to creating new ones.",
      "When you run a non-trivial bash command, explain what the command does and why you are running it.",
      "Working directory: /home/user/project. Is directory a git repo: Yes. Platform: linux.",
    ].join("\n"),
    cache_control: { type: "ephemeral" },
  },
];

function toolTurn(index: number, name: string, input: Record<string, unknown>, result: string) {
  const id = `toolu_01Bench${String(index).padStart(18, "0")}`;
  return [
    {
      role: "assistant",
      content: [
        { type: "text", text: `Let me look at step ${index + 1}.` },
        { type: "tool_use", id, name, input },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result }] },
  ];
}

const sourceLines = Array.from(
  { length: 12 },
  (_, line) => `${line + 1}\texport const part${line} = parse(input, ${line});`,
);

const messages = [
  {
    role: "user",
    content: [
      { type: "text", text: "<system-reminder>As you answer, use the tools when they help.</system-reminder>" },
      { type: "text", text: "The parser drops the last token when the input ends without a newline. Find and fix it." },
    ],
  },
  ...toolTurn(
    0,
    "Grep",
    { pattern: "function tokenize", path: "src", output_mode: "files_with_matches" },
    "src/parser/tokenize.ts",
  ),
  ...toolTurn(1, "Read", { file_path: "/home/user/project/src/parser/tokenize.ts" }, sourceLines.join("\n")),
  ...toolTurn(
    2,
    "Edit",
    {
      file_path: "/home/user/project/src/parser/tokenize.ts",
      old_string: "if (buffer && char === '\\n') flush();",
      new_string: "if (buffer && char === '\\n') flush();\n  if (buffer) flush();",
    },
    "The file /home/user/project/src/parser/tokenize.ts has been updated.",
  ),
  ...toolTurn(
    3,
    "Bash",
    { command: "npm test -- tokenize", description: "Run the tokenizer tests" },
    "PASS src/parser/tokenize.test.ts (12 tests)\nTests: 12 passed, 12 total",
  ),
  {
    role: "assistant",
    content: [{ type: "text", text: "Fixed: the tokenizer now flushes its buffer at end of input." }],
  },
  { role: "user", content: [{ type: "text", text: "Thanks. Now add a test for an input with no trailing newline." }] },
];

/** The Anthropic Messages body sent to the gateway. */
export function claudeCodeLikeBody(stream: boolean): Record<string, unknown> {
  return { model: "claude-sonnet-4-5", max_tokens: 32_000, stream, system, messages, tools };
}
