import { Readable } from "node:stream";
import { pino } from "pino";
import { type Dispatcher, request } from "undici";
import { buildConfig, parseFileConfig } from "../../src/gateway/config/load.js";
import type { GatewayConfig } from "../../src/gateway/config/types.js";
import { type RunningGateway, startGateway } from "../../src/gateway/server.js";
import { parseSse, type SseMessage } from "../../src/stream/sse.js";
import type { ScriptedUpstream } from "./scripted-upstream.js";
import { strictServerFor } from "./strict-servers.js";

/** Parsed JSON as the tests walk it: the assertions check the shape, so the type does not have to. */
// biome-ignore lint/suspicious/noExplicitAny: test assertions walk parsed JSON of any shape
export type Json = any;

export interface TestProvider {
  upstream: ScriptedUpstream;
  type: "openai" | "anthropic" | "openai-responses" | "gemini";
  apiKey?: string;
  preset?: string;
  reasoning?: "think-tags" | "reasoning_content" | "reasoning" | "drop";
  compat?: Record<string, unknown>;
  models?: Record<string, string>;
  defaultModel?: string;
  limits?: { contextWindow?: number; maxOutputTokens?: number };
  /** An `openai-responses` provider's `compacts` setting. */
  compacts?: boolean;
}

export interface TestGatewayOptions {
  providers: Record<string, TestProvider>;
  defaultProvider?: string;
  routes?: Array<{ match: string; provider: string; model?: string }>;
  apiKeys?: string[];
  /** Any other file setting (timeouts, limits, retries, traces). */
  file?: Record<string, unknown>;
  /** Given, the gateway's log lines (info and above) are parsed into it instead of being silenced. */
  logLines?: Array<Record<string, unknown>>;
}

/** A gateway on 127.0.0.1 (random port, in-memory store, silent logs) in front of scripted upstreams. */
export async function startTestGateway(
  options: TestGatewayOptions,
): Promise<RunningGateway & { config: GatewayConfig }> {
  for (const provider of Object.values(options.providers)) {
    // The scripted server refuses what the real server of this preset would refuse.
    if (provider.preset !== undefined && provider.type !== "gemini")
      provider.upstream.server = strictServerFor(provider.type, provider.preset);
  }
  const providers = Object.fromEntries(
    Object.entries(options.providers).map(([name, provider]) => [
      name,
      {
        type: provider.type,
        baseUrl: provider.upstream.baseUrl,
        ...(provider.apiKey === undefined ? {} : { apiKey: provider.apiKey }),
        ...(provider.preset === undefined ? {} : { preset: provider.preset }),
        ...(provider.reasoning === undefined ? {} : { reasoning: provider.reasoning }),
        ...(provider.compat === undefined ? {} : { compat: provider.compat }),
        ...(provider.models === undefined ? {} : { models: provider.models }),
        ...(provider.defaultModel === undefined ? {} : { defaultModel: provider.defaultModel }),
        ...(provider.limits === undefined ? {} : { limits: provider.limits }),
        ...(provider.compacts === undefined ? {} : { compacts: provider.compacts }),
      },
    ]),
  );
  const file = parseFileConfig({
    port: 0,
    store: "memory:",
    providers,
    ...(options.defaultProvider === undefined ? {} : { defaultProvider: options.defaultProvider }),
    ...(options.routes === undefined ? {} : { routes: options.routes }),
    ...(options.apiKeys === undefined ? {} : { apiKeys: options.apiKeys }),
    retries: { baseDelayMs: 10, maxDelayMs: 50 },
    ...options.file,
  });
  const config = buildConfig(file, {}, {});
  // PARLEY_TEST_LOG=debug shows the gateway's log lines while a test runs.
  const lines = options.logLines;
  const logger =
    lines === undefined
      ? pino({ level: process.env.PARLEY_TEST_LOG ?? "silent" })
      : pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const gateway = await startGateway(config, { logger });
  return { ...gateway, config };
}

export interface JsonReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  text: string;
}

/** POSTs JSON (an object is serialised; a string, Buffer or stream goes as it is) and reads a JSON reply. */
export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<JsonReply> {
  const raw =
    typeof body === "string" || Buffer.isBuffer(body) || body instanceof Readable ? body : JSON.stringify(body);
  const response = await request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: raw,
  });
  return readJsonReply(response);
}

export async function getJson(url: string, headers: Record<string, string> = {}): Promise<JsonReply> {
  return readJsonReply(await request(url, { method: "GET", headers }));
}

/** The reply's text, and its JSON when it is JSON (undefined otherwise: tests check what came). */
async function readJsonReply(response: Dispatcher.ResponseData): Promise<JsonReply> {
  const text = await response.body.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body: parsed, text };
}

export interface StreamReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  events: SseMessage[];
  /** The `data` of each event parsed as JSON (`[DONE]` and comments left out). */
  data: Array<Record<string, unknown>>;
}

export async function postStream(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<StreamReply> {
  const reply = await postJson(url, body, headers);
  const events = parseSse(reply.text);
  const data = events
    .filter((event) => event.data !== "[DONE]")
    .map((event) => JSON.parse(event.data) as Record<string, unknown>);
  return { status: reply.status, headers: reply.headers, text: reply.text, events, data };
}

/** Folds an Anthropic SSE transcript into the final content blocks, as an SDK would. */
export function anthropicContentFromEvents(data: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const blocks: Array<Record<string, unknown>> = [];
  const partialJson: string[] = [];
  for (const event of data) {
    if (event.type === "content_block_start") {
      blocks[event.index as number] = { ...(event.content_block as Record<string, unknown>) };
      partialJson[event.index as number] = "";
    } else if (event.type === "content_block_delta") {
      const block = blocks[event.index as number]!;
      const delta = event.delta as Record<string, string>;
      if (delta.type === "text_delta") block.text = `${block.text ?? ""}${delta.text}`;
      if (delta.type === "thinking_delta") block.thinking = `${block.thinking ?? ""}${delta.thinking}`;
      if (delta.type === "signature_delta") block.signature = delta.signature;
      if (delta.type === "input_json_delta") partialJson[event.index as number] += delta.partial_json ?? "";
    } else if (event.type === "content_block_stop") {
      const block = blocks[event.index as number]!;
      const json = partialJson[event.index as number];
      if (block.type === "tool_use" && json) block.input = JSON.parse(json);
    }
  }
  return blocks;
}
