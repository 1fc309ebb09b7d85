/**
 * A long agent session in the shape Claude Code gives it, deterministic: every request re-sends the whole
 * history (system prompt, a ~60 KB tools array, every earlier turn) plus one new tool turn of a few KB, with
 * `cache_control` moving to the newest block, as the client sends it; the upstream request is the same
 * conversation in Chat Completions form; the answers are event streams. What a gateway's traces hold for it.
 */
export interface SessionTurn {
  clientRequest: string;
  upstreamRequest: string;
  upstreamResponse: string;
  clientResponse: string;
}

/** A small deterministic generator (mulberry32), so every run stores the same bytes. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let mixed = state;
    mixed = Math.imul(mixed ^ (mixed >>> 15), mixed | 1);
    mixed ^= mixed + Math.imul(mixed ^ (mixed >>> 7), mixed | 61);
    return ((mixed ^ (mixed >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = (
  "the a file function return const value error test build module import export type interface class " +
  "async await promise string number boolean array object index length config server request response " +
  "stream chunk token model message content tool result path line column source target update change " +
  "check run pass fail expected received undefined null true false src lib dist node package json yaml"
).split(" ");

function prose(next: () => number, words: number): string {
  const out: string[] = [];
  for (let index = 0; index < words; index++) out.push(WORDS[Math.floor(next() * WORDS.length)]!);
  return out.join(" ");
}

/** Lines like a tool's output: paths, numbers, code. */
function toolOutput(next: () => number, bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  while (size < bytes) {
    const line = `${String(Math.floor(next() * 900) + 100).padStart(5)}\tsrc/${prose(next, 1)}/${prose(next, 1)}.ts: ${prose(next, 6 + Math.floor(next() * 8))} (${Math.floor(next() * 1e6)})`;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.join("\n");
}

function tools(next: () => number): Array<{ name: string; description: string; schema: Record<string, unknown> }> {
  const list = [];
  let size = 0;
  for (let index = 0; size < 60_000; index++) {
    const properties: Record<string, unknown> = {};
    for (let property = 0; property < 4; property++) {
      properties[`${prose(next, 1)}_${property}`] = { type: "string", description: prose(next, 20) };
    }
    const tool = { name: `Tool${index}`, description: prose(next, 120), schema: { type: "object", properties } };
    size += JSON.stringify(tool).length;
    list.push(tool);
  }
  return list;
}

export function* claudeCodeSession(turns = 200): Generator<SessionTurn> {
  const next = random(12_345);
  const toolList = tools(next);
  const system = prose(next, 1_500);
  const anthropicTools = toolList.map((tool) => ({
    name: tool.name,
    description: tool.description,
    input_schema: tool.schema,
  }));
  const openaiTools = toolList.map((tool) => ({
    type: "function",
    function: { name: tool.name, description: tool.description, parameters: tool.schema },
  }));
  type Block = Record<string, unknown>;
  const anthropic: Array<{ role: string; content: Block[] }> = [
    { role: "user", content: [{ type: "text", text: prose(next, 60) }] },
  ];
  const openai: Array<Record<string, unknown>> = [{ role: "user", content: (anthropic[0]!.content[0] as Block).text }];
  for (let turn = 0; turn < turns; turn++) {
    const last = anthropic.at(-1)!.content.at(-1)!;
    last.cache_control = { type: "ephemeral" };
    const clientRequest = JSON.stringify({
      model: "claude-sonnet-4-5",
      max_tokens: 32_000,
      system: [{ type: "text", text: system, cache_control: { type: "ephemeral" } }],
      messages: anthropic,
      tools: anthropicTools,
      stream: true,
    });
    delete last.cache_control;
    const upstreamRequest = JSON.stringify({
      model: "deepseek-chat",
      messages: [{ role: "system", content: system }, ...openai],
      tools: openaiTools,
      max_tokens: 32_000,
      stream: true,
      stream_options: { include_usage: true },
    });
    const text = prose(next, 30 + Math.floor(next() * 40));
    const id = `toolu_${turn.toString(36).padStart(6, "0")}`;
    const input = { command: `${prose(next, 3)} --${prose(next, 1)}` };
    yield {
      clientRequest,
      upstreamRequest,
      upstreamResponse: openaiStream(turn, text, id, input),
      clientResponse: anthropicStream(turn, text, id, input),
    };
    const output = toolOutput(next, 2_000 + Math.floor(next() * 3_000));
    anthropic.push(
      {
        role: "assistant",
        content: [
          { type: "text", text },
          { type: "tool_use", id, name: "Tool1", input },
        ],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: id, content: output }] },
    );
    openai.push(
      {
        role: "assistant",
        content: text,
        tool_calls: [{ id, type: "function", function: { name: "Tool1", arguments: JSON.stringify(input) } }],
      },
      { role: "tool", tool_call_id: id, content: output },
    );
  }
}

function openaiStream(turn: number, text: string, id: string, input: object): string {
  const chunk = (delta: object, finish: string | null = null) =>
    `data: ${JSON.stringify({ id: `chatcmpl-${turn}`, object: "chat.completion.chunk", created: 1_700_000_000 + turn, model: "deepseek-chat", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const words = text.split(" ");
  const call = { index: 0, id, type: "function", function: { name: "Tool1", arguments: JSON.stringify(input) } };
  return [
    chunk({ role: "assistant", content: "" }),
    ...words.map((word, index) => chunk({ content: index === 0 ? word : ` ${word}` })),
    chunk({ tool_calls: [call] }),
    chunk({}, "tool_calls"),
    "data: [DONE]\n\n",
  ].join("");
}

function anthropicStream(turn: number, text: string, id: string, input: object): string {
  const event = (type: string, data: object) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const words = text.split(" ");
  return [
    event("message_start", {
      message: { id: `msg_${turn}`, type: "message", role: "assistant", model: "claude-sonnet-4-5", content: [] },
    }),
    event("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ...words.map((word, index) =>
      event("content_block_delta", { index: 0, delta: { type: "text_delta", text: index === 0 ? word : ` ${word}` } }),
    ),
    event("content_block_stop", { index: 0 }),
    event("content_block_start", { index: 1, content_block: { type: "tool_use", id, name: "Tool1", input: {} } }),
    event("content_block_delta", {
      index: 1,
      delta: { type: "input_json_delta", partial_json: JSON.stringify(input) },
    }),
    event("content_block_stop", { index: 1 }),
    event("message_delta", { delta: { stop_reason: "tool_use" }, usage: { output_tokens: words.length + 20 } }),
    event("message_stop", {}),
  ].join("");
}
