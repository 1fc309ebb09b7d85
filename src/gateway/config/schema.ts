import {
  _default,
  array,
  boolean,
  config,
  int,
  maximum,
  minimum,
  minLength,
  nonnegative,
  number,
  optional,
  positive,
  record,
  regex,
  strictObject,
  string,
  unknown,
  url,
  type z,
  enum as zodEnum,
} from "zod/mini";
import en from "zod/v4/locales/en.js";

// Zod Mini: the same validation core as zod's classic API with functions instead of methods, imported by name so
// that the bundle carries only what is used (zod was more than half of the CLI bundle and a tenth of its
// start-up). English messages, as the classic API gives them, are its only locale.
config(en());

/** How thinking in the history is sent to an OpenAI-style upstream (see the contract's `--reasoning`). */
export const REASONING_MODES = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"] as const;
export type ReasoningModeName = (typeof REASONING_MODES)[number];

const durationMs = int().check(nonnegative());
const text = string();
const nonEmpty = string().check(minLength(1));

const providerSchema = strictObject({
  type: _default(zodEnum(["openai", "anthropic"]), "openai"),
  baseUrl: url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
  apiKey: optional(text),
  /** A compat preset id; guessed from `baseUrl` when absent. */
  preset: optional(text),
  reasoning: optional(zodEnum(REASONING_MODES)),
  /** Overrides of the preset's quirks (`OpenAICompat` fields). */
  compat: optional(record(string(), unknown())),
  /** Client model name -> upstream model name. */
  models: optional(record(string(), string())),
  /** Extra headers sent with every request to this provider. */
  headers: optional(record(string(), string())),
  anthropicVersion: optional(text),
});

const routeSchema = strictObject({
  /** Glob over the client's model name: `*` any run of characters, `?` one character. */
  match: nonEmpty,
  provider: nonEmpty,
  /** The upstream model; the provider's `models` map (or the client's name) when absent. */
  model: optional(nonEmpty),
});

/** The config file as written (YAML or JSON), after `${ENV}` expansion. Every key is optional. */
export const fileConfigSchema = strictObject({
  host: optional(nonEmpty),
  port: optional(int().check(minimum(0), maximum(65535))),
  store: optional(nonEmpty),
  apiKeys: optional(array(nonEmpty)),
  providers: optional(
    record(string().check(regex(/^[A-Za-z0-9_.-]+$/, "provider names use letters, digits, _ . -")), providerSchema),
  ),
  defaultProvider: optional(text),
  routes: optional(array(routeSchema)),
  limits: optional(strictObject({ maxBodyBytes: optional(int().check(positive())) })),
  timeouts: optional(
    strictObject({
      connectMs: optional(durationMs),
      firstByteMs: optional(durationMs),
      idleMs: optional(durationMs),
      pingIntervalMs: optional(durationMs),
      /** How long open streams may run on after SIGTERM before they are ended. */
      shutdownGraceMs: optional(durationMs),
      /** How long the first upstream event is awaited before the status line goes out anyway. */
      firstEventHoldMs: optional(durationMs),
    }),
  ),
  retries: optional(
    strictObject({
      maxAttempts: optional(int().check(minimum(1), maximum(10))),
      baseDelayMs: optional(durationMs),
      maxDelayMs: optional(durationMs),
      maxRetryAfterMs: optional(durationMs),
    }),
  ),
  traces: optional(
    strictObject({
      enabled: optional(boolean()),
      maxAgeDays: optional(number().check(positive())),
      maxCount: optional(int().check(positive())),
      /** Bytes all stored traces may take; the oldest go first. */
      maxBytes: optional(int().check(positive())),
      /** Bytes of each response body kept in a trace. */
      maxBodyBytes: optional(int().check(positive())),
    }),
  ),
  logLevel: optional(zodEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
export type FileProviderConfig = z.infer<typeof providerSchema>;
