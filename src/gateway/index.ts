export { KeyChecker } from "./auth.js";
export * from "./config/index.js";
export { type GatewayOptions, type RunningGateway, startGateway } from "./server.js";
export { approximateInputTokens, countInputTokens } from "./token-count.js";
