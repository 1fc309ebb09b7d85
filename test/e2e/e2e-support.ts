import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { RunningGateway } from "../../src/gateway/server.js";
import { startTestGateway, type TestGatewayOptions } from "../support/gateway-harness.js";
import { type RecordedRequest, type ScriptedUpstream, startScriptedUpstream } from "../support/scripted-upstream.js";

/** Shared pieces of the end-to-end suites: fixture paths, one gateway per test, upstream request lookups. */

export function fixturePath(relative: string): string {
  return fileURLToPath(new URL(`../fixtures/${relative}`, import.meta.url));
}

export function fixtureJson<T = Record<string, unknown>>(relative: string): T {
  return JSON.parse(readFileSync(fixturePath(relative), "utf8")) as T;
}

export interface E2eWorld {
  gateway: RunningGateway;
  /** OpenAI-compatible upstreams and the Anthropic one, by provider name. */
  upstreams: Record<string, ScriptedUpstream>;
  close(): Promise<void>;
}

export interface ProviderSpec {
  type: "openai" | "anthropic" | "openai-responses";
  preset?: string;
  reasoning?: "think-tags" | "reasoning_content" | "reasoning" | "drop";
  compat?: Record<string, unknown>;
}

/**
 * Starts one scripted upstream per provider and a gateway routing `<provider>-*` and `<provider>/*` model names
 * to it (model names pass unchanged), plus any extra routes given first.
 */
export async function startWorld(
  providers: Record<string, ProviderSpec>,
  extra: Partial<Pick<TestGatewayOptions, "routes" | "file" | "apiKeys">> = {},
): Promise<E2eWorld> {
  const upstreams: Record<string, ScriptedUpstream> = {};
  for (const [name, spec] of Object.entries(providers)) upstreams[name] = await startScriptedUpstream(spec.type);
  const names = Object.keys(providers);
  const gateway = await startTestGateway({
    providers: Object.fromEntries(
      names.map((name) => {
        const spec = providers[name]!;
        return [
          name,
          {
            upstream: upstreams[name]!,
            type: spec.type,
            ...(spec.preset === undefined ? {} : { preset: spec.preset }),
            ...(spec.reasoning === undefined ? {} : { reasoning: spec.reasoning }),
            ...(spec.compat === undefined ? {} : { compat: spec.compat }),
          },
        ];
      }),
    ),
    defaultProvider: names[0]!,
    routes: [
      ...(extra.routes ?? []),
      ...names.flatMap((name) => [
        { match: `${name}-*`, provider: name },
        { match: `${name}/*`, provider: name },
      ]),
    ],
    ...(extra.file === undefined ? {} : { file: extra.file }),
    ...(extra.apiKeys === undefined ? {} : { apiKeys: extra.apiKeys }),
  });
  return {
    gateway,
    upstreams,
    close: async () => {
      await gateway.close();
      await Promise.all(Object.values(upstreams).map((upstream) => upstream.close()));
    },
  };
}

/** The JSON body the upstream received on its n-th request (0-based), as an object. */
export function upstreamBody(upstream: ScriptedUpstream, index: number): Record<string, unknown> {
  const request: RecordedRequest | undefined = upstream.requests[index];
  if (request === undefined)
    throw new Error(`the upstream received ${upstream.requests.length} request(s), not ${index + 1}`);
  return request.body as Record<string, unknown>;
}

export type ChatMessage = Record<string, unknown> & { role: string };

/** The OpenAI chat messages of an upstream request. */
export function chatMessages(body: Record<string, unknown>): ChatMessage[] {
  return body.messages as ChatMessage[];
}

/** Every object anywhere inside a JSON value, for "this key appears nowhere" checks. */
export function everyObject(
  value: unknown,
  found: Array<Record<string, unknown>> = [],
): Array<Record<string, unknown>> {
  if (Array.isArray(value)) {
    for (const item of value) everyObject(item, found);
  } else if (value !== null && typeof value === "object") {
    found.push(value as Record<string, unknown>);
    for (const item of Object.values(value)) everyObject(item, found);
  }
  return found;
}

/** The entries of an `x-parley-lossy` header (an empty list when absent). */
export function lossyEntries(
  header: string | null | undefined,
): Array<{ code: string; message: string; path?: string }> {
  if (header === null || header === undefined || header === "") return [];
  return JSON.parse(header) as Array<{ code: string; message: string; path?: string }>;
}

/**
 * A recorded non-stream OpenAI answer replayed as a stream: `content` cut into pieces of `pieceLength`
 * characters (so tags and syntax split mid-token), tool calls as one chunk each, usage on the finish chunk.
 */
export function chunkedAnswer(response: Record<string, unknown>, pieceLength: number): string[] {
  const choice = (response.choices as Array<{ message: Record<string, unknown>; finish_reason: string }>)[0]!;
  const head = { id: response.id, object: "chat.completion.chunk", created: response.created, model: response.model };
  const frame = (delta: Record<string, unknown>, finish: string | null = null, usage?: unknown) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }], ...(usage === undefined ? {} : { usage }) })}\n\n`;
  const frames = [frame({ role: "assistant", content: "" })];
  const content = typeof choice.message.content === "string" ? choice.message.content : "";
  for (let start = 0; start < content.length; start += pieceLength)
    frames.push(frame({ content: content.slice(start, start + pieceLength) }));
  const calls = (choice.message.tool_calls ?? []) as Array<Record<string, unknown>>;
  for (const [index, call] of calls.entries()) frames.push(frame({ tool_calls: [{ index, ...call }] }));
  frames.push(frame({}, choice.finish_reason, response.usage), "data: [DONE]\n\n");
  return frames;
}
