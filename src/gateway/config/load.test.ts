import { readFileSync } from "node:fs";
import { describe, expect, test } from "vitest";
import { buildProviders } from "../exchange/providers.js";
import { ConfigError, loadConfig } from "./load.js";
import { globMatches, resolveRoute } from "./routing.js";

const files = (contents: Record<string, string>) => (path: string) => {
  const text = contents[path];
  if (text === undefined) throw new Error(`ENOENT: no such file '${path}'`);
  return text;
};

const multiProvider = `
defaultProvider: local
providers:
  nim:
    type: openai
    baseUrl: https://integrate.api.nvidia.com/v1/
    apiKey: \${NVIDIA_API_KEY}
    reasoning: reasoning_content
  anthropic:
    type: anthropic
    baseUrl: https://api.anthropic.com
    apiKey: \${ANTHROPIC_KEY:-none}
  local:
    baseUrl: http://127.0.0.1:8000/v1
    models:
      claude-haiku-4-5: qwen3-8b
routes:
  - match: "claude-opus-*"
    provider: nim
    model: z-ai/glm-5
  - match: "claude-sonnet-?-?"
    provider: anthropic
`;

describe("loadConfig", () => {
  test("defaults as the contract lists them", () => {
    const config = loadConfig({}, {});
    expect(config.host).toBe("127.0.0.1");
    expect(config.port).toBe(8787);
    expect(config.store).toBe("sqlite:./.parley/parley.db");
    expect(config.apiKeys).toEqual([]);
    expect(config.providers.default).toMatchObject({
      type: "openai",
      baseUrl: "http://127.0.0.1:11434/v1",
    });
    // No explicit mode: the preset's (think-tags for a server Parley has no preset for).
    expect(config.providers.default?.reasoning).toBeUndefined();
    expect(config.limits.maxBodyBytes).toBe(32 * 1024 * 1024);
  });

  test("the inspector: on by default, off by the file's inspector.enabled or by --no-inspector over the file", () => {
    expect(loadConfig({}, {}).inspector).toEqual({ enabled: true });
    const read = files({ "off.yaml": "inspector:\n  enabled: false\n", "on.yaml": "inspector:\n  enabled: true\n" });
    expect(loadConfig({ config: "off.yaml" }, {}, read).inspector).toEqual({ enabled: false });
    expect(loadConfig({ config: "on.yaml", inspector: false }, {}, read).inspector).toEqual({ enabled: false });
  });

  test("flags beat the environment, which beats the file", () => {
    const read = files({ "p.yaml": 'host: 0.0.0.0\nport: 9000\nstore: "memory:"\napiKeys: [file-key]\n' });
    const env = { PARLEY_PORT: "9100", PARLEY_STORE: "sqlite:/tmp/x.db", PARLEY_API_KEYS: "env-a, env-b" };
    const fromEnv = loadConfig({ config: "p.yaml" }, env, read);
    expect(fromEnv).toMatchObject({
      host: "0.0.0.0",
      port: 9100,
      store: "sqlite:/tmp/x.db",
      apiKeys: ["env-a", "env-b"],
    });
    const fromFlags = loadConfig({ config: "p.yaml", port: "9200", apiKeys: ["flag-key"] }, env, read);
    expect(fromFlags).toMatchObject({ port: 9200, apiKeys: ["flag-key"] });
    expect(loadConfig({ config: "p.yaml" }, {}, read)).toMatchObject({
      port: 9000,
      apiKeys: ["file-key"],
      store: "memory:",
    });
  });

  test("a file's key may name its tenant; keys from flags and the environment are plain keys", () => {
    const read = files({
      "k.yaml":
        "apiKeys:\n  - plain-key\n  - key: team-key-1\n    tenant: team\n  - { key: team-key-2, tenant: team }\n",
    });
    const config = loadConfig({ config: "k.yaml" }, {}, read);
    expect(config.apiKeys).toEqual(["plain-key", "team-key-1", "team-key-2"]);
    expect({ ...config.keyTenants }).toEqual({ "team-key-1": "team", "team-key-2": "team" });
    expect(loadConfig({ config: "k.yaml" }, { PARLEY_API_KEYS: "a,b" }, read)).toMatchObject({ apiKeys: ["a", "b"] });
    expect({ ...loadConfig({ config: "k.yaml", apiKeys: ["c"] }, {}, read).keyTenants }).toEqual({});
    expect(() => loadConfig({ config: "bad.yaml" }, {}, files({ "bad.yaml": "apiKeys:\n  - tenant: x\n" }))).toThrow(
      /apiKeys/,
    );
  });

  test("allowedHosts and allowedOrigins come from the file or the environment; an origin with a path is refused", () => {
    const read = files({ "o.yaml": "allowedHosts: [parley.internal]\nallowedOrigins: ['https://app.example']\n" });
    expect(loadConfig({ config: "o.yaml" }, {}, read)).toMatchObject({
      allowedHosts: ["parley.internal"],
      allowedOrigins: ["https://app.example"],
    });
    const env = { PARLEY_ALLOWED_HOSTS: "a.example, b.example", PARLEY_ALLOWED_ORIGINS: "http://localhost:3000" };
    expect(loadConfig({}, env, read)).toMatchObject({
      allowedHosts: ["a.example", "b.example"],
      allowedOrigins: ["http://localhost:3000"],
    });
    expect(() => loadConfig({}, { PARLEY_ALLOWED_ORIGINS: "https://app.example/page" }, read)).toThrow(
      /allowedOrigins/,
    );
  });

  test("the config file path may come from PARLEY_CONFIG", () => {
    const config = loadConfig({}, { PARLEY_CONFIG: "c.json" }, files({ "c.json": '{"port": 7000}' }));
    expect(config.port).toBe(7000);
  });

  test("upstream flags build the default provider", () => {
    const config = loadConfig(
      {
        upstream: "https://api.deepseek.com/v1/",
        upstreamKey: "k",
        upstreamType: "openai",
        reasoning: "reasoning_content",
      },
      {},
    );
    expect(config.providers.default).toMatchObject({
      baseUrl: "https://api.deepseek.com/v1",
      apiKey: "k",
      reasoning: "reasoning_content",
    });
  });

  test("several providers, environment expansion and routes", () => {
    const config = loadConfig(
      { config: "m.yaml" },
      { NVIDIA_API_KEY: "nvapi-123" },
      files({ "m.yaml": multiProvider }),
    );
    expect(config.providers.nim).toMatchObject({ apiKey: "nvapi-123", baseUrl: "https://integrate.api.nvidia.com/v1" });
    expect(config.providers.anthropic?.apiKey).toBe("none");
    expect(config.defaultProvider).toBe("local");
    expect(resolveRoute(config, "claude-opus-5-5")).toMatchObject({
      provider: { name: "nim" },
      upstreamModel: "z-ai/glm-5",
    });
    expect(resolveRoute(config, "claude-sonnet-4-5")).toMatchObject({
      provider: { name: "anthropic" },
      upstreamModel: "claude-sonnet-4-5",
    });
    expect(resolveRoute(config, "claude-haiku-4-5")).toMatchObject({
      provider: { name: "local" },
      upstreamModel: "qwen3-8b",
    });
    expect(resolveRoute(config, "gpt-x")).toMatchObject({ provider: { name: "local" }, upstreamModel: "gpt-x" });
  });

  test("upstream flags override the default provider of a file", () => {
    const read = files({ "m.yaml": multiProvider });
    const config = loadConfig({ config: "m.yaml", upstream: "http://10.0.0.2:8000/v1" }, { NVIDIA_API_KEY: "x" }, read);
    expect(config.providers.local?.baseUrl).toBe("http://10.0.0.2:8000/v1");
    expect(config.providers.nim?.baseUrl).toBe("https://integrate.api.nvidia.com/v1");
  });

  test.each([
    ["port: 70000", "port"],
    ["port: eighty", "port"],
    ["hostname: x", "hostname"],
    ["providers:\n  a:\n    baseUrl: ftp://x", "providers.a.baseUrl"],
    ["providers:\n  a:\n    baseUrl: http://x\n    type: grpc", "providers.a.type"],
    ["providers:\n  a:\n    baseUrl: http://x\n    reasoning: loud", "providers.a.reasoning"],
    [`providers:\n  a:\n    baseUrl: http://x\n    apiKey: $${"{"}MISSING_KEY}`, "providers.a.apiKey"],
    ["providers:\n  a:\n    baseUrl: http://x\n    colour: red", "providers.a.colour"],
    ["providers:\n  a:\n    baseUrl: http://x\nroutes:\n  - match: x\n    provider: b", "routes.0.provider"],
    ["providers:\n  a:\n    baseUrl: http://x\ndefaultProvider: b", "defaultProvider"],
    ["timeouts:\n  idleMs: -1", "timeouts.idleMs"],
    ["limits:\n  maxBodyBytes: 0", "limits.maxBodyBytes"],
    ["routes: {}", "routes"],
    ["port: [1", "config"],
  ])("a bad file (%j) names the key %s", (text, key) => {
    const load = () => loadConfig({ config: "bad.yaml" }, {}, files({ "bad.yaml": text }));
    expect(load).toThrow(ConfigError);
    try {
      load();
    } catch (error) {
      expect((error as ConfigError).key).toBe(key);
      expect((error as Error).message.startsWith(`${key}: `)).toBe(true);
    }
  });

  test.each([
    [{ port: "x" }, "port"],
    [{ upstreamType: "grpc" }, "upstream-type"],
    [{ reasoning: "loud" }, "reasoning"],
    [{ upstream: "localhost:8000" }, "upstream"],
    [{ config: "missing.yaml" }, "config"],
  ])("bad flags %j name %s", (flags, key) => {
    expect(() => loadConfig(flags, {}, files({}))).toThrow(expect.objectContaining({ key }));
  });
});

describe("the documented configuration", () => {
  test("docs/configuration.md's full example loads, with its model settings", () => {
    const doc = readFileSync(new URL("../../../docs/configuration.md", import.meta.url), "utf8");
    const yaml = /## A full example[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)![1]!;
    const env = { PARLEY_CLIENT_KEY: "ck", TEAM_A_KEY: "ta", NVIDIA_API_KEY: "nv", DEEPSEEK_API_KEY: "ds" };
    const config = loadConfig({ config: "parley.yaml" }, env, () => yaml);
    expect(config.providers.local).toMatchObject({ defaultModel: "Qwen/Qwen3-32B", discover: true });
    expect(config.providers.nim?.limits).toEqual({ contextWindow: 131_072, maxOutputTokens: 16_384 });
  });

  test("--model and --preset (or PARLEY_MODEL, PARLEY_PRESET) set the default provider's model and preset", () => {
    const config = loadConfig(
      { upstream: "http://127.0.0.1:9000/v1", model: "qwen3-coder:30b" },
      { PARLEY_PRESET: "ollama" },
    );
    expect(config.providers.default).toMatchObject({
      defaultModel: "qwen3-coder:30b",
      preset: "ollama",
      fromFlags: true,
    });
  });
});

describe("an openai-responses provider", () => {
  test("comes from --upstream-type or PARLEY_UPSTREAM_TYPE, its settings checked before listening", () => {
    const flags = { upstream: "https://api.openai.com/v1", upstreamType: "openai-responses" };
    expect(loadConfig(flags, {}, files({})).providers.default).toMatchObject({
      type: "openai-responses",
      baseUrl: "https://api.openai.com/v1",
    });
    const fromEnv = loadConfig({}, { PARLEY_UPSTREAM_TYPE: "openai-responses" }, files({}));
    expect(fromEnv.providers.default?.type).toBe("openai-responses");
    expect(buildProviders(fromEnv).default?.connection.endpoint).toBe("http://127.0.0.1:11434/v1/responses");
    // Its own reasoning goes back as its items; what it did not make goes as text or nowhere.
    const mode = loadConfig({ ...flags, reasoning: "reasoning_content" }, {}, files({}));
    expect(() => buildProviders(mode)).toThrow(expect.objectContaining({ key: "providers.default.reasoning" }));
  });
});

describe("globMatches", () => {
  test("* and ? are the only wildcards", () => {
    expect(globMatches("claude-*", "claude-opus-5-5")).toBe(true);
    expect(globMatches("claude-*", "gpt-5")).toBe(false);
    expect(globMatches("gpt-?", "gpt-5")).toBe(true);
    expect(globMatches("gpt-?", "gpt-50")).toBe(false);
    expect(globMatches("a.b", "axb")).toBe(false);
    expect(globMatches("*", "")).toBe(true);
  });
});
