import type { ReasoningModeName } from "./schema.js";

export interface ProviderConfig {
  /** The config key; also the `provider` recorded in reasoning origins. */
  name: string;
  type: "openai" | "anthropic";
  /** Without a trailing slash. */
  baseUrl: string;
  apiKey?: string;
  preset?: string;
  /** How history thinking is sent; absent: the preset's own mode. */
  reasoning?: ReasoningModeName;
  compat: Record<string, unknown>;
  models: Record<string, string>;
  headers: Record<string, string>;
  anthropicVersion: string;
}

export interface RouteRule {
  match: string;
  provider: string;
  model?: string;
}

/** The whole, validated gateway configuration: flags > environment > file > defaults, already merged. */
export interface GatewayConfig {
  host: string;
  port: number;
  store: string;
  apiKeys: string[];
  providers: Record<string, ProviderConfig>;
  defaultProvider: string;
  routes: RouteRule[];
  limits: { maxBodyBytes: number };
  timeouts: {
    connectMs: number;
    firstByteMs: number;
    idleMs: number;
    pingIntervalMs: number;
    shutdownGraceMs: number;
    firstEventHoldMs: number;
  };
  retries: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number };
  traces: { enabled: boolean; maxAgeDays?: number; maxCount?: number; maxBytes?: number; maxBodyBytes: number };
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
}
