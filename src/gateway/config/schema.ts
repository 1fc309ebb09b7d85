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
  union,
  unknown,
  url,
  type z,
  enum as zodEnum,
} from "zod/mini";
import en from "zod/v4/locales/en.js";
import { REASONING_MODES, type ReasoningMode } from "../../formats/adapter.js";
import { UPSTREAM_TYPES } from "../../formats/registry.js";

// Zod Mini: the same validation core as zod's classic API with functions instead of methods, imported by name so
// that the bundle carries only what is used (zod was more than half of the CLI bundle and a tenth of its
// start-up). English messages, as the classic API gives them, are its only locale.
config(en());

/** How thinking in the history is sent to an OpenAI-style upstream (see the contract's `--reasoning`). */
export { REASONING_MODES };
export type ReasoningModeName = ReasoningMode;

const durationMs = int().check(nonnegative());
const text = string();
const nonEmpty = string().check(minLength(1));

const providerSchema = strictObject({
  /** The provider's API: a format's upstream type (`openai`, `anthropic`). */
  type: _default(zodEnum(UPSTREAM_TYPES as [string, ...string[]]), "openai"),
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
  /** Where client model names the upstream does not serve go. */
  defaultModel: optional(nonEmpty),
  /** Limits for models the upstream and the published limits say nothing about. */
  limits: optional(
    strictObject({
      contextWindow: optional(int().check(positive())),
      maxOutputTokens: optional(int().check(positive())),
    }),
  ),
  /** Ask the provider which models it serves (`GET /models`); default true. */
  discover: optional(boolean()),
  /**
   * An `openai-responses` provider compacts a conversation itself (Codex's `compaction_trigger`,
   * `POST /responses/compact`); default true. False: Parley compacts for it, as for any other API.
   */
  compacts: optional(boolean()),
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
  /** Keys clients must send; a key may name the tenant whose stored conversations it reaches. */
  apiKeys: optional(array(union([nonEmpty, strictObject({ key: nonEmpty, tenant: optional(nonEmpty) })]))),
  /** Host names the gateway answers to (behind a proxy, or by a DNS name); IP literals and localhost always. */
  allowedHosts: optional(array(nonEmpty)),
  /** Web page origins allowed to call the gateway (`https://app.example`); none by default. */
  allowedOrigins: optional(array(url({ protocol: /^https?$/, error: "must be an http:// or https:// origin" }))),
  providers: optional(
    record(string().check(regex(/^[A-Za-z0-9_.-]+$/, "provider names use letters, digits, _ . -")), providerSchema),
  ),
  defaultProvider: optional(text),
  routes: optional(array(routeSchema)),
  limits: optional(
    strictObject({
      maxBodyBytes: optional(int().check(positive())),
      /** The most bytes of one upstream answer, streamed or whole. */
      maxAnswerBytes: optional(int().check(positive())),
      /** The most characters of one event of an upstream stream. */
      maxEventBytes: optional(int().check(positive())),
    }),
  ),
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
      /** From the request to the last byte of a whole (non-streamed) answer, retries included. */
      answerMs: optional(int().check(positive())),
      /** The longest one call to the store may take before its request gets a 503. */
      storeMs: optional(int().check(positive())),
      /** How long a provider's own token count is waited for before Parley estimates instead. */
      countTokensMs: optional(int().check(positive())),
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
  /** The web inspector at /inspect, on unless false. */
  inspector: optional(strictObject({ enabled: optional(boolean()) })),
  logLevel: optional(zodEnum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
export type FileProviderConfig = z.infer<typeof providerSchema>;
