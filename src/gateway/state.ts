import type { Logger } from "pino";
import type { Store } from "../store/open-store.js";
import type { UpstreamClient } from "../upstream/index.js";
import type { KeyChecker } from "./auth.js";
import type { GatewayConfig } from "./config/types.js";
import type { ProviderRuntime } from "./exchange/providers.js";
import type { RouteMemory } from "./exchange/route-switch.js";
import type { GatewayMetrics } from "./metrics.js";
import type { ModelCatalogue } from "./models/catalogue.js";

/** A stream being answered, so that shutdown can end it cleanly. */
export interface OpenStream {
  /** Writes a final error event and ends the response. */
  end(reason: string): void;
}

/** Everything a handler needs; built once at start-up. */
export interface GatewayState {
  config: GatewayConfig;
  providers: Record<string, ProviderRuntime>;
  /** What each provider serves and each model's limits, asked of the providers themselves. */
  catalogue: ModelCatalogue;
  upstream: UpstreamClient;
  store: Store | undefined;
  metrics: GatewayMetrics;
  logger: Logger;
  keys: KeyChecker;
  openStreams: Set<OpenStream>;
  /** Each conversation's last answered route, to tell when a turn goes elsewhere. */
  routes: RouteMemory;
  /** Configured client and upstream keys: kept out of traces whatever their shape. */
  secrets: readonly string[];
}
