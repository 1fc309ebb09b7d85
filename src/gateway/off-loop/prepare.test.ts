import { afterAll, expect, test } from "vitest";
import { formatAdapter } from "../../formats/registry.js";
import { buildConfig } from "../config/load.js";
import { conversationCacheKey } from "../exchange/cache-key.js";
import { type ClientRequest, planUpstream } from "../exchange/plan.js";
import { buildProviders } from "../exchange/providers.js";
import { expectObject, parseJsonText } from "../http/body.js";
import { planExchange, preparedClientRequest } from "./plan-exchange.js";
import { PreparePool } from "./prepare-pool.js";

/**
 * A request prepared on a thread goes upstream as the same bytes, with the same reports, as one prepared on the
 * event loop: the thread runs the same functions on a copy of the same providers.
 */
const config = buildConfig(
  {
    providers: {
      chat: { type: "openai", baseUrl: "http://127.0.0.1:9/v1" },
      claude: { type: "anthropic", baseUrl: "http://127.0.0.1:9" },
      responses: { type: "openai-responses", baseUrl: "http://127.0.0.1:9/v1" },
    },
    defaultProvider: "chat",
  } as never,
  {} as never,
  {},
);
const providers = buildProviders(config);
const pool = new PreparePool(config, 1);
afterAll(() => pool.close());

const chatBody = {
  model: "m",
  max_tokens: 50,
  messages: [
    { role: "system", content: "be brief" },
    { role: "user", content: "weather?" },
    {
      role: "assistant",
      content: null,
      tool_calls: [{ id: "c1", type: "function", function: { name: "w", arguments: "{}" } }],
    },
    { role: "user", content: "never mind" },
    { role: "user", content: [{ type: "text", text: "again" }] },
  ],
  tools: [{ type: "function", function: { name: "w", parameters: { type: "object" } } }],
};
const anthropicBody = {
  model: "claude",
  max_tokens: 100,
  system: "s",
  messages: [
    { role: "user", content: "a" },
    {
      role: "assistant",
      content: [
        { type: "thinking", thinking: "hm", signature: "sig" },
        { type: "text", text: "b" },
      ],
    },
    { role: "user", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }, "c"] },
  ],
};

const CASES: Array<{ name: string; format: "openai" | "anthropic"; provider: string; body: unknown }> = [
  { name: "Chat to Chat, an orphaned tool call repaired", format: "openai", provider: "chat", body: chatBody },
  { name: "Chat to Anthropic", format: "openai", provider: "claude", body: chatBody },
  { name: "Chat to Responses", format: "openai", provider: "responses", body: chatBody },
  { name: "Anthropic passthrough", format: "anthropic", provider: "claude", body: anthropicBody },
  { name: "Anthropic to Chat, lossy parts", format: "anthropic", provider: "chat", body: anthropicBody },
  {
    name: "Anthropic, a bad part",
    format: "anthropic",
    provider: "chat",
    body: { ...anthropicBody, messages: [{ role: "user", content: [{ type: "nope" }] }] },
  },
];

for (const { name, format: formatId, provider: providerName, body } of CASES) {
  test(name, async () => {
    const format = formatAdapter(formatId);
    const route = format.client.routes.find((candidate) => candidate.kind === "answer")!;
    const provider = providers[providerName]!;
    const text = JSON.stringify(body);

    let onLoop: { bodyText: string; lossy: unknown; repair: unknown } | { error: string };
    try {
      const raw = expectObject(parseJsonText(text).value);
      const converted = format.client.readRequest(raw, { route, params: {}, query: new URLSearchParams() });
      const request: ClientRequest = {
        format,
        clientModel: converted.value.model,
        stream: converted.value.stream === true,
        core: converted.value,
        raw,
        rawText: text,
        historyCount: 0,
        lossy: converted.lossy,
        cacheKey: conversationCacheKey({}, converted.value, undefined),
      };
      const plan = planUpstream(request, provider, "upstream-model");
      onLoop = {
        bodyText: plan.bodyText ?? JSON.stringify(plan.body),
        lossy: [...request.lossy, ...plan.lossy],
        repair: plan.repair,
      };
    } catch (error) {
      onLoop = { error: `${(error as Error).name}: ${(error as Error).message}` };
    }

    let offLoop: typeof onLoop;
    try {
      const prepared = await pool.read({
        format: formatId,
        route: format.client.routes.indexOf(route),
        params: {},
        query: "",
        text,
        sessionHeaders: {},
        hasStore: false,
      });
      expect(prepared).toBeDefined();
      try {
        const request = preparedClientRequest(format, prepared!);
        expect(request.core.messages).toEqual([]);
        const plan = await planExchange(request, provider, "upstream-model");
        offLoop = { bodyText: plan.bodyText!, lossy: [...request.lossy, ...plan.lossy], repair: plan.repair };
      } finally {
        prepared!.release();
      }
    } catch (error) {
      offLoop = { error: `${(error as Error).name}: ${(error as Error).message}` };
    }
    expect(offLoop).toEqual(onLoop);
  });
}

test("a request that needs the store is left to the event loop", async () => {
  const format = formatAdapter("responses");
  const route = format.client.routes.find((candidate) => candidate.kind === "answer")!;
  const prepared = await pool.read({
    format: "responses",
    route: format.client.routes.indexOf(route),
    params: {},
    query: "",
    text: JSON.stringify({ model: "m", input: "hi", previous_response_id: "resp_1" }),
    sessionHeaders: {},
    hasStore: true,
  });
  expect(prepared).toBeUndefined();
});
