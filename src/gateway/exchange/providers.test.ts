import { describe, expect, test } from "vitest";
import { buildConfig, ConfigError, parseFileConfig } from "../config/load.js";
import { buildProviders } from "./providers.js";

const configOf = (providers: Record<string, unknown>) => buildConfig(parseFileConfig({ providers }), {}, {});

describe("providers built from the configuration", () => {
  test("a lone Anthropic-format server Parley does not know keeps its signatures as they come", () => {
    const runtimes = buildProviders(
      configOf({ proxy: { type: "anthropic", baseUrl: "http://127.0.0.1:4000" }, local: { baseUrl: "http://x/v1" } }),
    );
    expect(runtimes.proxy?.connection.signatureOwner).toBeUndefined();
  });

  test("beside another Anthropic-format provider, its signatures are wrapped under its name; Anthropic's never", () => {
    const runtimes = buildProviders(
      configOf({
        proxy: { type: "anthropic", baseUrl: "http://127.0.0.1:4000" },
        anthropic: { type: "anthropic", baseUrl: "https://api.anthropic.com" },
        glm: { type: "anthropic", baseUrl: "https://api.z.ai/api/anthropic" },
      }),
    );
    expect(runtimes.proxy?.connection.signatureOwner).toBe("proxy");
    expect(runtimes.anthropic?.connection.signatureOwner).toBeUndefined();
    expect(runtimes.glm?.connection.signatureOwner).toBe("glm");
  });

  test("an Anthropic provider's unknown preset stops start-up naming the key", () => {
    const config = configOf({ a: { type: "anthropic", baseUrl: "http://127.0.0.1:4000", preset: "nvidia" } });
    expect(() => buildProviders(config)).toThrow(ConfigError);
    expect(() => buildProviders(config)).toThrow(/^providers\.a\.preset: unknown preset 'nvidia'/);
  });

  test("a Responses provider compacts itself at its /responses/compact unless configured not to; no other API takes the setting", () => {
    const runtimes = buildProviders(
      configOf({
        openai: { type: "openai-responses", baseUrl: "https://api.openai.com/v1" },
        local: { type: "openai-responses", baseUrl: "http://127.0.0.1:8080/v1", compacts: false },
      }),
    );
    expect(runtimes.openai?.connection.compactEndpoint).toBe("https://api.openai.com/v1/responses/compact");
    expect(runtimes.openai?.connection.compacts).toBeUndefined();
    expect(runtimes.local?.connection.compactEndpoint).toBeUndefined();
    expect(runtimes.local?.connection.compacts).toBe(false);
    const chat = configOf({ chat: { baseUrl: "http://127.0.0.1:4000/v1", compacts: true } });
    expect(() => buildProviders(chat)).toThrow(
      /^providers\.chat\.compacts: only an openai-responses provider compacts/,
    );
  });
});
