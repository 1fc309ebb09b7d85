import type { ReasoningModeName } from "./schema.js";

export interface ProviderConfig {
  /** The config key; also the `provider` recorded in reasoning origins. */
  name: string;
  /** The API it speaks: one of the registered formats' upstream types. */
  type: string;
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
  /** Where names the upstream does not serve go (`--model`); absent: its one model, when it lists one. */
  defaultModel?: string;
  /** Limits for models the upstream and the published limits say nothing about. */
  limits?: { contextWindow?: number; maxOutputTokens?: number };
  /** Whether the provider is asked which models it serves (`GET /models`). */
  discover: boolean;
  /** Whether an `openai-responses` provider compacts conversations itself; absent: its API's default. */
  compacts?: boolean;
  /** Built from the `--upstream` flags (messages then name the flags, not file keys). */
  fromFlags?: boolean;
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
  /** The tenant each key that names one belongs to (key -> tenant); any other key is a tenant of its own. */
  keyTenants: Record<string, string>;
  /** Host names the gateway answers to besides IP literals, `localhost` and the name it listens on. */
  allowedHosts: string[];
  /** Origins of web pages allowed to call the gateway, besides its own. */
  allowedOrigins: string[];
  providers: Record<string, ProviderConfig>;
  defaultProvider: string;
  routes: RouteRule[];
  limits: { maxBodyBytes: number; maxAnswerBytes: number; maxEventBytes: number };
  timeouts: {
    connectMs: number;
    firstByteMs: number;
    idleMs: number;
    pingIntervalMs: number;
    shutdownGraceMs: number;
    firstEventHoldMs: number;
    answerMs: number;
    storeMs: number;
    /** A provider's own token count (`count_tokens`), asked with this deadline; past it, Parley estimates. */
    countTokensMs: number;
  };
  retries: { maxAttempts: number; baseDelayMs: number; maxDelayMs: number; maxRetryAfterMs: number };
  traces: { enabled: boolean; maxAgeDays?: number; maxCount?: number; maxBytes?: number; maxBodyBytes: number };
  /** The trace and conversation inspector at `/inspect` (`--no-inspector` turns it off). */
  inspector: { enabled: boolean };
  logLevel: "fatal" | "error" | "warn" | "info" | "debug" | "trace" | "silent";
}
