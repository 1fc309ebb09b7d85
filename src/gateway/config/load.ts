import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { z } from "zod/mini";
import { missingPackage } from "../../core/index.js";
import { findUpstreamType, orList, UPSTREAM_TYPES } from "../../formats/registry.js";
import { DEFAULT_STORE_DEADLINE_MS } from "../../store/deadline.js";
import { type FileConfig, fileConfigSchema, REASONING_MODES, type ReasoningModeName } from "./schema.js";
import type { GatewayConfig, ProviderConfig } from "./types.js";

/** What `parley serve` takes on its command line; every field is optional. */
export interface ServeFlags {
  host?: string;
  port?: string;
  config?: string;
  upstream?: string;
  upstreamKey?: string;
  upstreamType?: string;
  reasoning?: string;
  store?: string;
  apiKeys?: string[];
  model?: string;
  preset?: string;
  /** `--no-inspector`: false. */
  inspector?: boolean;
}

/** A configuration problem, found before the gateway listens. `key` names the setting. */
export class ConfigError extends Error {
  readonly key: string;

  constructor(key: string, message: string) {
    super(`${key}: ${message}`);
    this.name = "ConfigError";
    this.key = key;
  }
}

export const DEFAULTS = {
  host: "127.0.0.1",
  port: 8787,
  store: "sqlite:./.parley/parley.db",
  upstreamType: "openai",
  upstreamUrl: "http://127.0.0.1:11434/v1",
  maxBodyBytes: 32 * 1024 * 1024,
  maxAnswerBytes: 64 * 1024 * 1024,
  maxEventBytes: 8 * 1024 * 1024,
  anthropicVersion: "2023-06-01",
};

/**
 * A provider's own token count is waited for this long before Parley estimates instead: a count is a template and
 * a tokenizer pass, no model run (the test llama.cpp server counts Claude Code's first request, 27 KB and 4,861 tokens,
 * in 70 to 180 ms), and the client asking is waiting on it before it sends anything, so a slow count is worth less than
 * an estimate now.
 */
const DEFAULT_COUNT_TOKENS_MS = 2_000;

/**
 * Merges flags > environment > file > defaults and validates the result; throws `ConfigError` naming the key.
 * Upstream flags (`--upstream`...) describe the default provider: they build it when the file names none, and
 * override its fields when it does.
 */
export function loadConfig(
  flags: ServeFlags,
  env: Record<string, string | undefined>,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): GatewayConfig {
  const configPath = flags.config ?? env.PARLEY_CONFIG;
  const file = configPath === undefined ? {} : readConfigFile(configPath, readFile, env);
  return buildConfig(file, flags, env);
}

export function readConfigFile(
  path: string,
  readFile: (path: string) => string,
  env: Record<string, string | undefined>,
): FileConfig {
  let text: string;
  try {
    text = readFile(path);
  } catch (error) {
    throw new ConfigError("config", `cannot read ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new ConfigError(
      "config",
      `${path} is not valid ${path.endsWith(".json") ? "JSON" : "YAML"}: ${(error as Error).message}`,
    );
  }
  if (raw === null || raw === undefined) raw = {};
  return parseFileConfig(expandEnv(raw, env, []));
}

export function parseFileConfig(raw: unknown): FileConfig {
  const result = fileConfigSchema.safeParse(raw);
  if (!result.success) throw configErrorFromIssue(result.error.issues[0]);
  return result.data;
}

function configErrorFromIssue(issue: z.core.$ZodIssue | undefined): ConfigError {
  if (issue === undefined) return new ConfigError("config", "invalid");
  const key = issue.path.map(String).join(".") || "config";
  if (issue.code === "unrecognized_keys") {
    const prefix = issue.path.length > 0 ? `${key}.` : "";
    return new ConfigError(`${prefix}${issue.keys[0] ?? ""}`, "unknown setting");
  }
  return new ConfigError(key, issue.message);
}

/** Replaces `${NAME}` (and `${NAME:-fallback}`) in every string of the parsed file. */
export function expandEnv(value: unknown, env: Record<string, string | undefined>, path: string[]): unknown {
  if (typeof value === "string") {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_, name: string, fallback?: string) => {
      const found = env[name];
      if (found !== undefined && found !== "") return found;
      if (fallback !== undefined) return fallback;
      throw new ConfigError(path.join(".") || "config", `environment variable ${name} is not set`);
    });
  }
  if (Array.isArray(value)) return value.map((item, index) => expandEnv(item, env, [...path, String(index)]));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandEnv(item, env, [...path, key])]));
  }
  return value;
}

export function buildConfig(
  file: FileConfig,
  flags: ServeFlags,
  env: Record<string, string | undefined>,
): GatewayConfig {
  const host = flags.host ?? env.PARLEY_HOST ?? file.host ?? DEFAULTS.host;
  const portText = flags.port ?? env.PARLEY_PORT;
  const port = portText === undefined ? (file.port ?? DEFAULTS.port) : parsePort(portText);
  const keyEntries = flags.apiKeys?.length
    ? flags.apiKeys
    : env.PARLEY_API_KEYS
      ? splitKeys(env.PARLEY_API_KEYS)
      : (file.apiKeys ?? []);
  const apiKeys = keyEntries.map((entry) => (typeof entry === "string" ? entry : entry.key));
  // No prototype: a key is a key, whatever its text.
  const keyTenants: Record<string, string> = Object.create(null);
  for (const entry of keyEntries) if (typeof entry !== "string" && entry.tenant) keyTenants[entry.key] = entry.tenant;

  const allowedHosts = env.PARLEY_ALLOWED_HOSTS ? splitKeys(env.PARLEY_ALLOWED_HOSTS) : (file.allowedHosts ?? []);
  const allowedOrigins = env.PARLEY_ALLOWED_ORIGINS
    ? splitKeys(env.PARLEY_ALLOWED_ORIGINS)
    : (file.allowedOrigins ?? []);
  for (const origin of allowedOrigins) {
    if (!/^https?:\/\/[^/]+\/?$/.test(origin)) {
      throw new ConfigError("allowedOrigins", `'${origin}' is not an origin (scheme://host[:port], no path)`);
    }
  }

  const upstreamUrl = flags.upstream ?? env.PARLEY_UPSTREAM_URL;
  const upstreamKey = flags.upstreamKey ?? env.PARLEY_UPSTREAM_KEY;
  const upstreamType = flags.upstreamType ?? env.PARLEY_UPSTREAM_TYPE;
  const reasoning = flags.reasoning ?? env.PARLEY_REASONING;
  const model = nonEmptyText(flags.model ?? env.PARLEY_MODEL);
  const preset = nonEmptyText(flags.preset ?? env.PARLEY_PRESET);
  if (upstreamType !== undefined && findUpstreamType(upstreamType) === undefined) {
    throw new ConfigError("upstream-type", `must be ${orList(UPSTREAM_TYPES)}, not '${upstreamType}'`);
  }
  if (reasoning !== undefined && !(REASONING_MODES as readonly string[]).includes(reasoning)) {
    throw new ConfigError("reasoning", `must be one of ${REASONING_MODES.join(", ")}, not '${reasoning}'`);
  }
  if (upstreamUrl !== undefined && !/^https?:\/\/[^/]/.test(upstreamUrl)) {
    throw new ConfigError("upstream", `must be an http:// or https:// URL, not '${upstreamUrl}'`);
  }

  const fileProviders = file.providers ?? {};
  const names = Object.keys(fileProviders);
  const providers: Record<string, ProviderConfig> = {};
  for (const name of names) {
    const provider = fileProviders[name]!;
    providers[name] = {
      name,
      type: provider.type,
      baseUrl: trimSlash(provider.baseUrl),
      ...(provider.apiKey === undefined || provider.apiKey === "" ? {} : { apiKey: provider.apiKey }),
      ...(provider.preset === undefined ? {} : { preset: provider.preset }),
      ...(provider.reasoning === undefined ? {} : { reasoning: provider.reasoning }),
      compat: provider.compat ?? {},
      models: provider.models ?? {},
      headers: provider.headers ?? {},
      anthropicVersion: provider.anthropicVersion ?? DEFAULTS.anthropicVersion,
      ...(provider.defaultModel === undefined ? {} : { defaultModel: provider.defaultModel }),
      ...(provider.limits === undefined ? {} : { limits: definedLimits(provider.limits) }),
      discover: provider.discover ?? true,
      ...(provider.compacts === undefined ? {} : { compacts: provider.compacts }),
    };
  }
  const defaultProvider = file.defaultProvider ?? names[0] ?? "default";
  if (names.length === 0) {
    providers.default = {
      name: "default",
      type: upstreamType ?? DEFAULTS.upstreamType,
      baseUrl: trimSlash(upstreamUrl ?? DEFAULTS.upstreamUrl),
      ...(upstreamKey ? { apiKey: upstreamKey } : {}),
      ...(reasoning === undefined ? {} : { reasoning: reasoning as ReasoningModeName }),
      ...(preset === undefined ? {} : { preset }),
      ...(model === undefined ? {} : { defaultModel: model }),
      compat: {},
      models: {},
      headers: {},
      anthropicVersion: DEFAULTS.anthropicVersion,
      discover: true,
      fromFlags: true,
    };
  } else {
    const target = providers[defaultProvider];
    if (target === undefined) throw new ConfigError("defaultProvider", `no provider named '${defaultProvider}'`);
    if (upstreamUrl !== undefined) {
      target.baseUrl = trimSlash(upstreamUrl);
      // Messages about this provider then name the flags the user gave.
      target.fromFlags = true;
    }
    if (upstreamType !== undefined) target.type = upstreamType;
    if (upstreamKey) target.apiKey = upstreamKey;
    if (reasoning !== undefined) target.reasoning = reasoning as ReasoningModeName;
    if (preset !== undefined) target.preset = preset;
    if (model !== undefined) target.defaultModel = model;
  }

  const routes = file.routes ?? [];
  routes.forEach((route, index) => {
    if (providers[route.provider] === undefined) {
      throw new ConfigError(`routes.${index}.provider`, `no provider named '${route.provider}'`);
    }
  });

  return {
    host,
    port,
    store: flags.store ?? env.PARLEY_STORE ?? file.store ?? DEFAULTS.store,
    apiKeys,
    keyTenants,
    allowedHosts,
    allowedOrigins,
    providers,
    defaultProvider,
    routes: routes.map((route) => ({
      match: route.match,
      provider: route.provider,
      ...(route.model === undefined ? {} : { model: route.model }),
    })),
    limits: {
      maxBodyBytes: file.limits?.maxBodyBytes ?? DEFAULTS.maxBodyBytes,
      maxAnswerBytes: file.limits?.maxAnswerBytes ?? DEFAULTS.maxAnswerBytes,
      maxEventBytes: file.limits?.maxEventBytes ?? DEFAULTS.maxEventBytes,
    },
    timeouts: {
      connectMs: file.timeouts?.connectMs ?? 10_000,
      firstByteMs: file.timeouts?.firstByteMs ?? 300_000,
      idleMs: file.timeouts?.idleMs ?? 300_000,
      pingIntervalMs: file.timeouts?.pingIntervalMs ?? 10_000,
      shutdownGraceMs: file.timeouts?.shutdownGraceMs ?? 30_000,
      firstEventHoldMs: file.timeouts?.firstEventHoldMs ?? 10_000,
      answerMs: file.timeouts?.answerMs ?? 600_000,
      storeMs: file.timeouts?.storeMs ?? DEFAULT_STORE_DEADLINE_MS,
      countTokensMs: file.timeouts?.countTokensMs ?? DEFAULT_COUNT_TOKENS_MS,
    },
    retries: {
      maxAttempts: file.retries?.maxAttempts ?? 3,
      baseDelayMs: file.retries?.baseDelayMs ?? 250,
      maxDelayMs: file.retries?.maxDelayMs ?? 8_000,
      maxRetryAfterMs: file.retries?.maxRetryAfterMs ?? 30_000,
    },
    traces: {
      enabled: file.traces?.enabled ?? true,
      ...(file.traces?.maxAgeDays === undefined ? { maxAgeDays: 30 } : { maxAgeDays: file.traces.maxAgeDays }),
      ...(file.traces?.maxCount === undefined ? { maxCount: 10_000 } : { maxCount: file.traces.maxCount }),
      // Without it, the store's own default: 256 MB on disk, 32 MB for memory:.
      ...(file.traces?.maxBytes === undefined ? {} : { maxBytes: file.traces.maxBytes }),
      maxBodyBytes: file.traces?.maxBodyBytes ?? 256 * 1024,
    },
    inspector: { enabled: flags.inspector ?? file.inspector?.enabled ?? true },
    logLevel: file.logLevel ?? logLevelFromEnv(env.PARLEY_LOG_LEVEL) ?? "info",
  };
}

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;

function logLevelFromEnv(value: string | undefined): GatewayConfig["logLevel"] | undefined {
  if (value === undefined || value === "") return undefined;
  if (!(LOG_LEVELS as readonly string[]).includes(value)) {
    throw new ConfigError("PARLEY_LOG_LEVEL", `must be one of ${LOG_LEVELS.join(", ")}, not '${value}'`);
  }
  return value as GatewayConfig["logLevel"];
}

function parsePort(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65535)
    throw new ConfigError("port", `must be a number from 0 to 65535, not '${text}'`);
  return port;
}

function definedLimits(limits: { contextWindow?: number | undefined; maxOutputTokens?: number | undefined }): {
  contextWindow?: number;
  maxOutputTokens?: number;
} {
  return {
    ...(limits.contextWindow === undefined ? {} : { contextWindow: limits.contextWindow }),
    ...(limits.maxOutputTokens === undefined ? {} : { maxOutputTokens: limits.maxOutputTokens }),
  };
}

function nonEmptyText(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value.trim();
}

function splitKeys(text: string): string[] {
  return text
    .split(",")
    .map((key) => key.trim())
    .filter((key) => key !== "");
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, "");
}

/** The YAML parser loads only for a YAML config file (it is a fifth of start-up otherwise). */
function parseYaml(text: string): unknown {
  let yaml: typeof import("yaml");
  try {
    yaml = createRequire(import.meta.url)("yaml") as typeof import("yaml");
  } catch (error) {
    throw missingPackage(error, "yaml", "a YAML configuration file") ?? error;
  }
  return yaml.parse(text);
}
