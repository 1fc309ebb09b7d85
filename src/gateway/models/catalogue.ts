import {
  type DiscoveredModel,
  type DiscoveryOutcome,
  type DiscoveryTarget,
  discoverModels,
} from "../../upstream/discovery.js";
import type { ProviderRuntime } from "../exchange/providers.js";

/**
 * What each provider serves, asked of the provider itself (`GET /models`) at start and again when it may have
 * changed: a list older than `refreshMs` is asked again in the background on the next request; a provider that did
 * not answer, or that answered a request with 404, is asked again before the next request that goes to it.
 */

export type ProviderStatus = "pending" | "listed" | "not-listed" | "unreachable";

export interface ProviderModels {
  status: ProviderStatus;
  /** Why there is no list (`connection refused (...)`, `GET /v1/models answered 404`). */
  cause?: string;
  /** In the order the provider listed them. */
  models: Map<string, DiscoveredModel>;
}

/** A model's limits and where each came from, for `x-parley-lossy` and the start-up lines. */
export interface ResolvedLimits {
  contextWindow?: number;
  contextSource?: string;
  maxOutputTokens?: number;
  outputSource?: string;
}

export interface CatalogueOptions {
  /** Each discovery request's time limit. */
  timeoutMs: number;
  /** Age after which a listed provider is asked again (in the background). */
  refreshMs: number;
  /** Least time between two attempts at a provider that gave no list. */
  retryMs: number;
  secrets: readonly string[];
  /** Replaces the HTTP discovery (tests). */
  discover?: (target: DiscoveryTarget) => Promise<DiscoveryOutcome>;
}

interface Entry extends ProviderModels {
  askedAt: number;
  stale: boolean;
  inFlight: Promise<void> | undefined;
}

export class ModelCatalogue {
  private readonly entries = new Map<string, Entry>();
  private readonly discover: (target: DiscoveryTarget) => Promise<DiscoveryOutcome>;

  constructor(
    private readonly providers: Readonly<Record<string, ProviderRuntime>>,
    private readonly options: CatalogueOptions,
  ) {
    this.discover = options.discover ?? discoverModels;
    for (const [name, runtime] of Object.entries(providers)) {
      const asked = runtime.config.discover;
      this.entries.set(name, {
        status: asked ? "pending" : "not-listed",
        ...(asked ? {} : { cause: "not asked (discover: false)" }),
        models: new Map(),
        askedAt: 0,
        stale: asked,
        inFlight: undefined,
      });
    }
  }

  /** Asks every provider; resolves when all have answered or failed. */
  start(): Promise<void> {
    return Promise.all([...this.entries.keys()].map((name) => this.refresh(name))).then(() => undefined);
  }

  models(provider: string): ProviderModels {
    return this.entry(provider);
  }

  /**
   * Before a request goes to `provider`: a provider with no list yet (down at start, or its model just gone) is
   * asked now, at most every `retryMs`; an old list is renewed in the background.
   */
  async beforeRequest(provider: string): Promise<void> {
    const entry = this.entry(provider);
    // Only a provider that has not answered yet, or whose model just went, is waited for; a server that answers
    // but keeps no list (MiniMax) is asked again as rarely as a listed one.
    const waitFor = entry.status === "pending" || entry.status === "unreachable" || entry.stale;
    if (entry.inFlight !== undefined) {
      if (waitFor) await entry.inFlight;
      return;
    }
    const age = performance.now() - entry.askedAt;
    if (waitFor) {
      if (age >= this.options.retryMs) await this.refresh(provider);
    } else if (age >= this.options.refreshMs) {
      void this.refresh(provider);
    }
  }

  /** The provider answered a request for a model with 404: its list is asked again before the next request. */
  markStale(provider: string): void {
    const entry = this.entries.get(provider);
    if (entry !== undefined) entry.stale = true;
  }

  /** Whether `provider` listed `model`. */
  serves(provider: string, model: string): boolean {
    const entry = this.entries.get(provider);
    return entry?.status === "listed" && entry.models.has(model);
  }

  /**
   * A model's limits: what the provider's own list says, else the provider's published limits (`model-limits.ts`),
   * else the provider's `limits` setting; the output limit is never above the preset's `maxTokensCap`.
   */
  limits(provider: string, model: string): ResolvedLimits {
    const runtime = this.providers[provider];
    const resolved: ResolvedLimits = {};
    if (runtime === undefined) return resolved;
    const listed = this.entries.get(provider)?.models.get(model);
    const listSource = `the upstream's ${listed?.limitSource ?? "GET /models"}`;
    if (listed?.contextWindow !== undefined) {
      resolved.contextWindow = listed.contextWindow;
      resolved.contextSource = listSource;
    }
    if (listed?.maxOutputTokens !== undefined) {
      resolved.maxOutputTokens = listed.maxOutputTokens;
      resolved.outputSource = listSource;
    }
    const facts = runtime.connection.modelFacts;
    const published = facts?.publishedLimits(model);
    const publisher = `${facts?.preset ?? runtime.config.name}'s published limits`;
    if (resolved.contextWindow === undefined && published?.contextWindow !== undefined) {
      resolved.contextWindow = published.contextWindow;
      resolved.contextSource = publisher;
    }
    if (resolved.maxOutputTokens === undefined && published?.maxOutputTokens !== undefined) {
      resolved.maxOutputTokens = published.maxOutputTokens;
      resolved.outputSource = publisher;
    }
    const configured = runtime.config.limits;
    if (resolved.contextWindow === undefined && configured?.contextWindow !== undefined) {
      resolved.contextWindow = configured.contextWindow;
      resolved.contextSource = `providers.${provider}.limits`;
    }
    if (resolved.maxOutputTokens === undefined && configured?.maxOutputTokens !== undefined) {
      resolved.maxOutputTokens = configured.maxOutputTokens;
      resolved.outputSource = `providers.${provider}.limits`;
    }
    const cap = facts?.maxTokensCap;
    if (cap !== undefined && (resolved.maxOutputTokens === undefined || cap < resolved.maxOutputTokens)) {
      resolved.maxOutputTokens = cap;
      resolved.outputSource = `providers.${provider}.compat.maxTokensCap`;
    }
    return resolved;
  }

  private entry(provider: string): Entry {
    const entry = this.entries.get(provider);
    if (entry === undefined) throw new Error(`no provider named '${provider}'`);
    return entry;
  }

  private refresh(provider: string): Promise<void> {
    const entry = this.entry(provider);
    if (entry.inFlight !== undefined) return entry.inFlight;
    const runtime = this.providers[provider]!;
    if (!runtime.config.discover) return Promise.resolve();
    entry.askedAt = performance.now();
    entry.stale = false;
    entry.inFlight = this.discover(discoveryTarget(runtime, this.options))
      .then(
        (outcome) => {
          apply(entry, outcome);
          if (outcome.status === "listed" && outcome.owners !== undefined)
            runtime.connection.recogniseServer?.(outcome.owners);
        },
        (error: unknown) => apply(entry, { status: "not-listed", cause: (error as Error).message }),
      )
      .finally(() => {
        entry.inFlight = undefined;
      });
    return entry.inFlight;
  }
}

function apply(entry: Entry, outcome: DiscoveryOutcome): void {
  if (outcome.status === "listed") {
    entry.status = "listed";
    entry.models = new Map(outcome.models.map((model) => [model.id, model]));
    delete entry.cause;
    return;
  }
  // A list that was read once stays while a later attempt fails: the models are still the best knowledge.
  if (entry.status === "listed" && outcome.status === "unreachable") {
    entry.cause = outcome.cause;
    return;
  }
  entry.status = outcome.status;
  entry.cause = outcome.cause;
}

function discoveryTarget(runtime: ProviderRuntime, options: CatalogueOptions): DiscoveryTarget {
  const { config, connection } = runtime;
  const own = connection.discovery;
  const parse = own.parse?.bind(own);
  return {
    baseUrl: config.baseUrl,
    headers: own.headers,
    modelsUrl: own.url,
    // A list read by its API's own parser names its own path as where the limits came from.
    ...(parse === undefined
      ? {}
      : {
          parse: (json: unknown) =>
            parse(json)?.map((model) =>
              model.contextWindow !== undefined || model.maxOutputTokens !== undefined
                ? { ...model, limitSource: `GET ${new URL(own.url).pathname}` }
                : model,
            ),
        }),
    ...(connection.modelFacts === undefined ? {} : { server: connection.modelFacts.preset }),
    ...(connection.recogniseServer === undefined ? {} : { owners: true }),
    timeoutMs: options.timeoutMs,
    secrets: options.secrets,
  };
}
