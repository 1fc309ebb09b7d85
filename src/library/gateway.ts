/** `parley/gateway`: the gateway `parley serve` runs, its configuration and its token counts, for embedding. */
export * from "../gateway/index.js";
