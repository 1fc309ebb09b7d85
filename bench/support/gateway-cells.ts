import { request } from "undici";
import { claudeCodeLikeBody } from "./bodies.js";
import type { GatewayCell, Mode } from "./gateway-report.js";
import { closedLoop, type LoadTarget } from "./load.js";
import { RssSampler, readProcessStats } from "./process-stats.js";

/** What the gateway benchmarks share: the requests' headers and checks, and one measured cell. */

export const anthropicHeaders = {
  "content-type": "application/json",
  "anthropic-version": "2023-06-01",
  "x-api-key": "bench",
};
export const openaiHeaders = { "content-type": "application/json", authorization: "Bearer bench" };
export const anthropicStreamEnded = (text: string) => text.includes("event: message_stop");
export const openaiStreamEnded = (text: string) => text.endsWith("data: [DONE]\n\n");
export const parsesAs = (field: string) => (text: string) => {
  try {
    return (JSON.parse(text) as Record<string, unknown>)[field] !== undefined;
  } catch {
    return false;
  }
};

/** A closed loop against a gateway process, with that process's CPU time and its largest RSS meanwhile. */
export async function gatewayCell(
  pid: number,
  target: LoadTarget,
  concurrency: number,
  ms: number,
): Promise<GatewayCell> {
  const sampler = new RssSampler(pid).start();
  const before = readProcessStats(pid);
  const result = await closedLoop(target, concurrency, ms);
  const after = readProcessStats(pid);
  return { ...result, cpuMs: after.cpuMs - before.cpuMs, rssMaxBytes: sampler.stop() };
}

export function push<T>(map: Map<string, T[]>, key: string, value: T): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

export interface Targets {
  direct: Record<Mode, LoadTarget>;
  parley: Record<Mode, LoadTarget>;
  pacedDirect: LoadTarget;
  pacedParley: LoadTarget;
}

/**
 * The direct baseline sends exactly the body Parley sent upstream for the same client request (read back
 * from the mock), so both sides ask the upstream for the same thing.
 */
export async function buildTargets(gatewayUrl: string, mockBaseUrl: string, pacedBaseUrl: string): Promise<Targets> {
  const origin = (url: string) => new URL(url).origin;
  const parleyTarget = (mode: Mode, model?: string): LoadTarget => {
    const body = claudeCodeLikeBody(mode === "stream");
    if (model !== undefined) body.model = model;
    return {
      origin: gatewayUrl,
      path: "/v1/messages",
      body: JSON.stringify(body),
      headers: anthropicHeaders,
      check: mode === "stream" ? anthropicStreamEnded : parsesAs("content"),
    };
  };
  const parley = { stream: parleyTarget("stream"), json: parleyTarget("json") };
  const upstreamBody = async (mode: Mode) => {
    const sent = await request(`${gatewayUrl}/v1/messages`, {
      method: "POST",
      headers: parley[mode].headers,
      body: parley[mode].body,
    });
    const answer = await sent.body.text();
    if (sent.statusCode !== 200) throw new Error(`the gateway answered ${sent.statusCode}: ${answer.slice(0, 500)}`);
    const recorded = await request(`${origin(mockBaseUrl)}/last-request?stream=${mode === "stream" ? 1 : 0}`);
    return recorded.body.text();
  };
  const directTarget = (mode: Mode, body: string, baseUrl: string): LoadTarget => ({
    origin: origin(baseUrl),
    path: `${new URL(baseUrl).pathname}/chat/completions`,
    body,
    headers: openaiHeaders,
    check: mode === "stream" ? openaiStreamEnded : parsesAs("choices"),
  });
  const streamBody = await upstreamBody("stream");
  const jsonBody = await upstreamBody("json");
  return {
    parley,
    direct: {
      stream: directTarget("stream", streamBody, mockBaseUrl),
      json: directTarget("json", jsonBody, mockBaseUrl),
    },
    pacedParley: parleyTarget("stream", "paced-sonnet"),
    pacedDirect: directTarget("stream", streamBody, pacedBaseUrl),
  };
}
