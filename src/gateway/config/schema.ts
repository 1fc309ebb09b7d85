import { z } from "zod";

/** How thinking in the history is sent to an OpenAI-style upstream (see the contract's `--reasoning`). */
export const REASONING_MODES = ["think-tags", "reasoning_content", "reasoning", "reasoning_details", "drop"] as const;
export type ReasoningModeName = (typeof REASONING_MODES)[number];

const durationMs = z.number().int().nonnegative();

const providerSchema = z.strictObject({
  type: z.enum(["openai", "anthropic"]).default("openai"),
  baseUrl: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }),
  apiKey: z.string().optional(),
  /** A compat preset id; guessed from `baseUrl` when absent. */
  preset: z.string().optional(),
  reasoning: z.enum(REASONING_MODES).optional(),
  /** Overrides of the preset's quirks (`OpenAICompat` fields). */
  compat: z.record(z.string(), z.unknown()).optional(),
  /** Client model name -> upstream model name. */
  models: z.record(z.string(), z.string()).optional(),
  /** Extra headers sent with every request to this provider. */
  headers: z.record(z.string(), z.string()).optional(),
  anthropicVersion: z.string().optional(),
});

const routeSchema = z.strictObject({
  /** Glob over the client's model name: `*` any run of characters, `?` one character. */
  match: z.string().min(1),
  provider: z.string().min(1),
  /** The upstream model; the provider's `models` map (or the client's name) when absent. */
  model: z.string().min(1).optional(),
});

/** The config file as written (YAML or JSON), after `${ENV}` expansion. Every key is optional. */
export const fileConfigSchema = z.strictObject({
  host: z.string().min(1).optional(),
  port: z.number().int().min(0).max(65535).optional(),
  store: z.string().min(1).optional(),
  apiKeys: z.array(z.string().min(1)).optional(),
  providers: z
    .record(z.string().regex(/^[A-Za-z0-9_.-]+$/, "provider names use letters, digits, _ . -"), providerSchema)
    .optional(),
  defaultProvider: z.string().optional(),
  routes: z.array(routeSchema).optional(),
  limits: z.strictObject({ maxBodyBytes: z.number().int().positive().optional() }).optional(),
  timeouts: z
    .strictObject({
      connectMs: durationMs.optional(),
      firstByteMs: durationMs.optional(),
      idleMs: durationMs.optional(),
      pingIntervalMs: durationMs.optional(),
      /** How long open streams may run on after SIGTERM before they are ended. */
      shutdownGraceMs: durationMs.optional(),
      /** How long the first upstream event is awaited before the status line goes out anyway. */
      firstEventHoldMs: durationMs.optional(),
    })
    .optional(),
  retries: z
    .strictObject({
      maxAttempts: z.number().int().min(1).max(10).optional(),
      baseDelayMs: durationMs.optional(),
      maxDelayMs: durationMs.optional(),
      maxRetryAfterMs: durationMs.optional(),
    })
    .optional(),
  traces: z
    .strictObject({
      enabled: z.boolean().optional(),
      maxAgeDays: z.number().positive().optional(),
      maxCount: z.number().int().positive().optional(),
      /** Bytes of each body kept in a trace. */
      maxBodyBytes: z.number().int().positive().optional(),
    })
    .optional(),
  logLevel: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).optional(),
});

export type FileConfig = z.infer<typeof fileConfigSchema>;
export type FileProviderConfig = z.infer<typeof providerSchema>;
