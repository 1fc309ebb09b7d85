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
});
