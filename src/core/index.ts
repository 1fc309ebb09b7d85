export * from "./conversation.js";
export * from "./errors.js";
export * from "./lossy.js";
export * from "./parts.js";
export * from "./reasoning-origin.js";
export * from "./stop-reason.js";
export * from "./stream-events.js";
export * from "./usage.js";
