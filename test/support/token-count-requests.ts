import { readFileSync, writeFileSync } from "node:fs";
import { formatAdapter } from "../../src/formats/registry.js";
import { approximateInputTokens, countInputTokens } from "../../src/gateway/token-count.js";
import { readClaudeCodeFixture } from "./claude-code-fixtures.js";

/**
 * The requests the input-token estimate is measured on against a real server's counts
 * (`test/fixtures/llamacpp-server/count-tokens.json`, recorded from llama.cpp's `/v1/messages/count_tokens` by
 * `PARLEY_RECORD_TOKEN_COUNTS=1 npx vitest run test/e2e/llamacpp-server.test.ts`): Claude Code's own requests as
 * recorded (its first turn, its compaction request) and a session grown from the first turn the way Claude Code grows
 * one (thinking, tool calls, directory listings, source files and JSON read back as tool results), each an Anthropic
 * `count_tokens` body. The file contents are read from this repository when recording; the fixture keeps them as
 * they were then.
 */
export interface CountedRequestSpec {
  name: string;
  /** What the request holds, for the table in docs/gateway.md. */
  what: string;
  body: Record<string, unknown>;
}

type Block = Record<string, unknown>;
type Message = { role: "user" | "assistant"; content: string | Block[] };

const repository = new URL("../../", import.meta.url);
const file = (path: string) => readFileSync(new URL(path, repository), "utf8");

/** What `count_tokens` takes of a Messages request. */
function countBody(body: Record<string, unknown>, keepTools = true): Record<string, unknown> {
  const kept: Record<string, unknown> = { model: body.model, messages: body.messages };
  if (body.system !== undefined) kept.system = body.system;
  if (keepTools && body.tools !== undefined) kept.tools = body.tools;
  return kept;
}

let callId = 0;
/** One tool round: the assistant's thinking, a sentence and a call, and the result the tool gave. */
function toolRound(thinking: string, sentence: string, name: string, input: unknown, result: string): Message[] {
  const id = `toolu_01Count${String(++callId).padStart(4, "0")}`;
  return [
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking, signature: `EqQBCkYIBhgCKkA${"z".repeat(60)}count-signature==` },
        { type: "text", text: sentence },
        { type: "tool_use", id, name, input },
      ],
    },
    { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: result }] },
  ];
}

const LISTING = [
  "total 96",
  "drwxr-xr-x 12 user user  4096 Nov 27 23:01 .",
  "drwxr-xr-x  5 user user  4096 Nov 27 22:10 ..",
  "-rw-r--r--  1 user user   512 Nov 27 22:10 architecture.test.ts",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 cli",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 core",
  "drwxr-xr-x  7 user user  4096 Nov 27 22:10 formats",
  "drwxr-xr-x 10 user user  4096 Nov 27 22:10 gateway",
  "-rw-r--r--  1 user user  1301 Nov 27 22:10 index.ts",
  "drwxr-xr-x  3 user user  4096 Nov 27 22:10 inspect",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 library",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 repair",
  "drwxr-xr-x  6 user user  4096 Nov 27 22:10 store",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 stream",
  "drwxr-xr-x  3 user user  4096 Nov 27 22:10 text",
  "drwxr-xr-x  2 user user  4096 Nov 27 22:10 upstream",
].join("\n");

/** A source file as Claude Code's Read tool gives it back: each line numbered. */
function numbered(text: string): string {
  return text
    .split("\n")
    .map((line, index) => `${String(index + 1).padStart(6)}\t${line}`)
    .join("\n");
}

export function tokenCountRequests(): CountedRequestSpec[] {
  const firstTurn = readClaudeCodeFixture("2.1.332");
  const compaction = JSON.parse(file("test/fixtures/claude-code/2.1.332.compaction.json")) as { body: Block };
  if (firstTurn === undefined) throw new Error("the Claude Code 2.1.332 first request fixture is missing");
  const first = countBody(firstTurn.body);
  const start = first.messages as Message[];
  const session: Message[] = [
    ...start,
    ...toolRound(
      "The user wants to know how retries work. I should look at the source tree first.",
      "Let me look at the source tree.",
      "Bash",
      { command: "ls -la src", description: "List the source folders" },
      LISTING,
    ),
    ...toolRound(
      "The upstream folder holds the HTTP client; retry.ts should have the policy.",
      "The retry policy should be in src/upstream/retry.ts.",
      "Read",
      { file_path: "/home/user/project/src/upstream/retry.ts" },
      numbered(file("src/upstream/retry.ts")),
    ),
    {
      role: "assistant",
      content: [
        {
          type: "text",
          text: "Retries use exponential backoff with equal jitter: the first wait is up to 250 ms, doubling each attempt up to 8 s, and a Retry-After from the upstream wins when it is under 30 s.",
        },
      ],
    },
    { role: "user", content: "Good. Now where is the plan that decides whether a request is retried?" },
  ];
  const longRead: Message[] = [
    ...session,
    ...toolRound(
      "The plan is in the gateway's exchange folder. Reading plan.ts and the package manifest will show it.",
      "I'll read the exchange plan.",
      "Read",
      { file_path: "/home/user/project/src/gateway/exchange/plan.ts" },
      numbered(file("src/gateway/exchange/plan.ts")),
    ),
    ...toolRound(
      "Which dependencies does it use? The manifest says.",
      "And the manifest:",
      "Read",
      { file_path: "/home/user/project/package.json" },
      numbered(file("package.json")),
    ),
  ];
  const jsonResult: Message[] = [
    ...start,
    ...toolRound(
      "The user asked what the model server lists. curl its model list.",
      "Asking the server for its models.",
      "Bash",
      { command: "curl -s http://127.0.0.1:8080/v1/models" },
      JSON.stringify(JSON.parse(file("test/fixtures/llamacpp-server/models.json")).response.body),
    ),
  ];
  const prose = file("README.md");
  return [
    {
      name: "first-turn",
      what: "Claude Code 2.1.332's first request: system prompt, 12 tools, one question with its reminders",
      body: first,
    },
    {
      name: "first-turn-no-tools",
      what: "the same without its tools",
      body: countBody(firstTurn.body, false),
    },
    {
      name: "tool-loop",
      what: "the first turn grown by two tool rounds (thinking, Bash listing, Read of a 1.7 KB file) and a reply",
      body: { ...first, messages: session },
    },
    {
      name: "long-reads",
      what: "the tool loop plus two more Reads (a 7 KB TypeScript file, package.json)",
      body: { ...first, messages: longRead },
    },
    {
      name: "json-result",
      what: "the first turn plus a tool result of compact JSON (a model list)",
      body: { ...first, messages: jsonResult },
    },
    {
      name: "compaction",
      what: "Claude Code's compaction request (empty and interrupted turns, its summary instructions)",
      body: countBody(compaction.body),
    },
    {
      name: "prose",
      what: "no tools: the README (9 KB of Markdown prose) as one question",
      body: {
        model: first.model,
        messages: [{ role: "user", content: `Summarise this README:\n\n${prose}` }],
      },
    },
    {
      name: "non-english",
      what: "no tools: a question and an answer in German and Chinese",
      body: {
        model: first.model,
        messages: [
          {
            role: "user",
            content:
              "Warum schlägt der Test für das Datumsformat auf meinem Rechner fehl, aber nicht auf dem Build-Server? Die Zeitzone ist Europe/Berlin.",
          },
          {
            role: "assistant",
            content:
              "Der Test formatiert das Datum in der lokalen Zeitzone. Um Mitternacht UTC ist es in Berlin schon der nächste Tag. 测试在本地时区格式化日期：在柏林，UTC 午夜时已经是第二天了，所以结果相差一天。请在 formatDate 中使用 UTC。",
          },
          { role: "user", content: "请把修复写成一个补丁，并说明为什么构建服务器上没有出错。" },
        ],
      },
    },
  ];
}

/** One request of the set with the count the real server gave it. */
export interface RecordedCount extends CountedRequestSpec {
  inputTokens: number;
}

export interface CountFixture {
  /** The server the counts came from, as the other llama.cpp fixtures name it. */
  server: Record<string, string>;
  counts: RecordedCount[];
}

const COUNT_FIXTURE = new URL("../fixtures/llamacpp-server/count-tokens.json", import.meta.url);

export const recordingTokenCounts = process.env.PARLEY_RECORD_TOKEN_COUNTS === "1";

export function readCountFixture(): CountFixture {
  return JSON.parse(readFileSync(COUNT_FIXTURE, "utf8")) as CountFixture;
}

export function writeCountFixture(fixture: CountFixture): void {
  writeFileSync(COUNT_FIXTURE, `${JSON.stringify(fixture, null, 2)}\n`);
}

/**
 * Where the gateway's two figures stay against the real server's count (docs/gateway.md, "count_tokens and the
 * message_start estimate"): `count_tokens` (o200k_base) never above the real count by more than 5%, nor below 60% of
 * it; the `message_start` approximation between 70% and 120%.
 */
export const ESTIMATE_BAND = {
  countTokens: { low: 0.6, high: 1.05 },
  messageStart: { low: 0.7, high: 1.2 },
};

export interface EstimateRow {
  name: string;
  what: string;
  real: number;
  counted: number;
  approximated: number;
  /** `counted / real` and `approximated / real`, to two places. */
  ratio: number;
  approximateRatio: number;
}

const round = (value: number) => Math.round(value * 100) / 100;

/** The gateway's estimate of each request (as an Anthropic client's `count_tokens` reads it) beside the real count. */
export async function estimateAgainst(counts: readonly RecordedCount[]): Promise<EstimateRow[]> {
  return Promise.all(
    counts.map(async ({ name, what, body, inputTokens }) => {
      const request = formatAdapter("anthropic").client.readCountTokensRequest!(body);
      const counted = await countInputTokens(request);
      const approximated = approximateInputTokens(request);
      return {
        name,
        what,
        real: inputTokens,
        counted,
        approximated,
        ratio: round(counted / inputTokens),
        approximateRatio: round(approximated / inputTokens),
      };
    }),
  );
}
