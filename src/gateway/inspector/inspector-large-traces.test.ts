import { request } from "undici";
import { afterAll, beforeAll, expect, test, vi } from "vitest";
import { startTestGateway } from "../../../test/support/gateway-harness.js";
import { largeTrace } from "../../../test/support/large-trace.js";
import { type ScriptedUpstream, startScriptedUpstream } from "../../../test/support/scripted-upstream.js";
import { exchangeView } from "../../inspect/exchange-view.js";
import { previousView } from "../../inspect/previous-view.js";
import { redactView } from "../../store/traces/redact.js";
import { PreparePool } from "../off-loop/prepare-pool.js";
import type { RunningGateway } from "../server.js";

/**
 * The views of a large trace (bodies over 1 MiB of text) are built on a prepare thread, not on the event loop
 * (`/health` answering meanwhile: `src/gateway/gateway-large-requests.test.ts`): they are the views the event loop
 * builds for a small one, the configured keys kept out of them as there.
 */

const KEY = "sk-parley-client-key-0101";
const UPSTREAM_KEY = "sk-upstream-secret-0102";

let upstream: ScriptedUpstream;
let gateway: RunningGateway;
const earlier = largeTrace({
  id: "trace_large_1",
  turns: 2_000,
  outputCharacters: 300,
  conversationId: "conv_large",
  createdAt: new Date(Date.now() - 60_000).toISOString(),
  secret: UPSTREAM_KEY,
});
const later = largeTrace({ id: "trace_large_2", turns: 2_100, outputCharacters: 300, conversationId: "conv_large" });

beforeAll(async () => {
  upstream = await startScriptedUpstream("openai");
  gateway = await startTestGateway({
    providers: { nim: { type: "openai", upstream, apiKey: UPSTREAM_KEY } },
    file: { apiKeys: [{ key: KEY, tenant: "team" }] },
  });
  for (const trace of [earlier, later]) await gateway.state.store!.traces.record({ ...trace, tenant: "team" });
});

afterAll(async () => {
  await gateway?.close();
  await upstream?.close();
});

async function inspect(path: string): Promise<unknown> {
  const reply = await request(`${gateway.url}/inspect/api/traces/${path}`, { headers: { "x-api-key": KEY } });
  const text = await reply.body.text();
  expect(reply.statusCode, text.slice(0, 300)).toBe(200);
  expect(reply.headers["content-type"]).toBe("application/json");
  return JSON.parse(text);
}

/** What the event loop builds for a trace (as the store gives it back), as JSON carries it. */
const asSent = (view: unknown) => JSON.parse(JSON.stringify(redactView(view, gateway.state.secrets)));

test("an exchange of 2 MB bodies is viewed on a thread, as the event loop would view it", async () => {
  const built = vi.spyOn(PreparePool.prototype, "view");
  const stored = (await gateway.state.store!.traces.get(later.id))!;
  expect(stored.clientRequest!.length).toBeGreaterThan(1 << 20);
  const view = await inspect(later.id);
  expect(built).toHaveBeenCalledOnce();
  expect(view).toEqual(asSent(exchangeView(stored, gateway.state.providers.nim!.adapter)));
  built.mockRestore();
});

test("the previous exchange's view of two large traces too, keys kept out", async () => {
  const built = vi.spyOn(PreparePool.prototype, "view");
  const [stored, before] = await Promise.all([
    gateway.state.store!.traces.get(later.id),
    gateway.state.store!.traces.get(earlier.id),
  ]);
  const [listed] = (await gateway.state.store!.traces.list({ conversationId: "conv_large", limit: 2 })).traces.slice(1);
  const view = (await inspect(`${later.id}/previous`)) as { by: string; previous: { id: string } };
  expect(built).toHaveBeenCalledOnce();
  expect(view.previous.id).toBe(earlier.id);
  expect(view).toEqual(asSent(previousView(stored!, listed!, before!, "conversation")));
  expect(JSON.stringify(view)).not.toContain(UPSTREAM_KEY);
  built.mockRestore();
});
