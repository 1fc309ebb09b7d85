export { buildConfig, ConfigError, DEFAULTS, expandEnv, loadConfig, parseFileConfig, type ServeFlags } from "./load.js";
export { globMatches, type ResolvedRoute, resolveRoute } from "./routing.js";
export { type FileConfig, REASONING_MODES, type ReasoningModeName } from "./schema.js";
export type { GatewayConfig, ProviderConfig, RouteRule } from "./types.js";
