import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Logger, pino } from "pino";
import { isParleyError } from "../core/index.js";
import type { ConversationStore, TraceRetentionPolicy } from "../store/types.js";
import { UpstreamClient } from "../upstream/index.js";
import { KeyChecker } from "./auth.js";
import type { GatewayConfig } from "./config/types.js";
import { buildProviders } from "./exchange/providers.js";
import { compose, type Middleware } from "./http/compose.js";
import { createContext } from "./http/context.js";
import { describeError, sendError } from "./http/error-response.js";
import { Router } from "./http/router.js";
import { GatewayMetrics } from "./metrics.js";
import { handleAppendMessages, handleCreateConversation, handleGetConversation } from "./routes/conversations.js";
import {
  handleCountTokens,
  handleGetModel,
  handleHealth,
  handleHello,
  handleListModels,
  handleMetrics,
} from "./routes/info.js";
import { handleChatCompletions, handleMessages } from "./routes/messages.js";
import type { GatewayState } from "./state.js";

export interface GatewayOptions {
  /** Defaults to pino JSON lines on stderr at the configured level. */
  logger?: Logger;
  /** An open store to use instead of opening `config.store` (it is closed with the gateway all the same). */
  store?: ConversationStore;
}

export interface RunningGateway {
  url: string;
  state: GatewayState;
  /** Stops accepting, lets open streams finish within the grace period, ends the rest, closes the store. */
  close(): Promise<void>;
}

/** Builds everything from a validated config and listens; configuration errors throw before listening. */
export async function startGateway(config: GatewayConfig, options: GatewayOptions = {}): Promise<RunningGateway> {
  const providers = buildProviders(config);
  const logs = options.logger === undefined ? batchedStderrLogger(config.logLevel) : undefined;
  const logger = options.logger ?? logs!.logger;
  const secrets = Object.values(config.providers).flatMap((provider) => (provider.apiKey ? [provider.apiKey] : []));
  const metrics = new GatewayMetrics();
  const store = options.store ?? (await openConfiguredStore(config, [...secrets, ...config.apiKeys]));
  const state: GatewayState = {
    config,
    providers,
    upstream: new UpstreamClient({
      timeouts: config.timeouts,
      retry: config.retries,
      secrets: [...secrets, ...config.apiKeys],
      onRetry: (attempt, delayMs, error, request) =>
        logger.warn({ requestId: request.requestId, attempt, delayMs, err: error.message }, "retrying upstream"),
    }),
    store,
    metrics,
    logger,
    keys: new KeyChecker(config.apiKeys),
    openStreams: new Set(),
    secrets: [...secrets, ...config.apiKeys],
  };
  const router = buildRouter(state);
  let inFlight = 0;

  const handle = compose([
    async (ctx, next) => {
      inFlight++;
      try {
        await next();
      } catch (error) {
        const description = describeError(error, ctx.requestId);
        if (ctx.clientGone.aborted) {
          ctx.log.errorType = "client_disconnected";
        } else {
          if (!isParleyError(error)) logger.error({ requestId: ctx.requestId, err: error }, "handler failed");
          ctx.log.errorType = description.type;
          metrics.errors.inc({ type: description.type });
        }
        if (!ctx.res.headersSent && !ctx.res.destroyed) sendError(ctx, description);
        else if (!ctx.res.writableEnded) ctx.res.end();
      } finally {
        inFlight--;
        // 499 (nginx's "client closed request"): the client left before its answer was written.
        const gone =
          ctx.log.errorType === "client_disconnected" || (ctx.clientGone.aborted && !ctx.res.writableFinished);
        const status = gone ? 499 : ctx.res.statusCode;
        metrics.requests.inc({ route: ctx.route, status: String(status) });
        logger.info(
          {
            requestId: ctx.requestId,
            route: ctx.route,
            status,
            durationMs: Math.round((performance.now() - ctx.startedAt) * 100) / 100,
            ...ctx.log,
          },
          "request",
        );
      }
    },
    async (ctx) => {
      const route = router.match(ctx);
      ctx.api = route.api;
      ctx.route = `${route.method} ${route.pattern}`;
      if (route.auth) state.keys.check(ctx);
      await route.handler(ctx);
    },
  ] satisfies Middleware[]);

  const server: Server = createServer({ keepAliveTimeout: 65_000 }, (req, res) => {
    void handle(createContext(req, res));
  });
  server.on("clientError", (error, socket) => {
    if (socket.writable) socket.end("HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n");
    logger.debug({ err: error.message }, "client error");
  });
  try {
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.port, config.host, () => {
        server.off("error", reject);
        resolve();
      });
    });
  } catch (error) {
    await state.upstream.destroy();
    await store?.close();
    throw new Error(`cannot listen on ${config.host}:${config.port}: ${(error as Error).message}`, { cause: error });
  }
  const pruneTimer = startTracePruning(state);
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      clearInterval(pruneTimer);
      server.close();
      server.closeIdleConnections();
      const deadline = performance.now() + config.timeouts.shutdownGraceMs;
      while ((state.openStreams.size > 0 || inFlight > 0) && performance.now() < deadline) await delay(25);
      for (const stream of state.openStreams) stream.end("the gateway is shutting down");
      const endDeadline = performance.now() + 1_000;
      while (inFlight > 0 && performance.now() < endDeadline) await delay(10);
      server.closeAllConnections();
      await state.upstream.destroy();
      await state.store?.close();
      logs?.stop();
      logger.flush?.();
    })();
    return closing;
  };
  return { url: `http://${host}:${address.port}`, state, close };
}

function buildRouter(state: GatewayState): Router {
  const bind =
    (handler: (ctx: import("./http/context.js").Context, state: GatewayState) => Promise<void>) =>
    (ctx: import("./http/context.js").Context) =>
      handler(ctx, state);
  return new Router()
    .add({ method: "POST", pattern: "/v1/messages", api: "anthropic", auth: true, handler: bind(handleMessages) })
    .add({
      method: "POST",
      pattern: "/v1/messages/count_tokens",
      api: "anthropic",
      auth: true,
      handler: bind(handleCountTokens),
    })
    .add({ method: "GET", pattern: "/v1/models", api: "anthropic", auth: true, handler: bind(handleListModels) })
    .add({ method: "GET", pattern: "/v1/models/{id}", api: "anthropic", auth: true, handler: bind(handleGetModel) })
    .add({
      method: "POST",
      pattern: "/v1/chat/completions",
      api: "openai",
      auth: true,
      handler: bind(handleChatCompletions),
    })
    .add({
      method: "POST",
      pattern: "/v1/conversations",
      api: "anthropic",
      auth: true,
      handler: bind(handleCreateConversation),
    })
    .add({
      method: "POST",
      pattern: "/v1/conversations/{id}/messages",
      api: "anthropic",
      auth: true,
      handler: bind(handleAppendMessages),
    })
    .add({
      method: "GET",
      pattern: "/v1/conversations/{id}",
      api: "anthropic",
      auth: true,
      handler: bind(handleGetConversation),
    })
    .add({ method: "GET", pattern: "/health", api: "anthropic", auth: false, handler: handleHealth })
    .add({ method: "HEAD", pattern: "/health", api: "anthropic", auth: false, handler: handleHealth })
    .add({ method: "HEAD", pattern: "/api/hello", api: "anthropic", auth: false, handler: handleHello })
    .add({ method: "GET", pattern: "/metrics", api: "anthropic", auth: true, handler: bind(handleMetrics) });
}

async function openConfiguredStore(config: GatewayConfig, secrets: readonly string[]): Promise<ConversationStore> {
  const { openStore } = await import("../store/open-store.js");
  // The configured retention, not the store's default, from the first pruning on; the trace writer keeps it
  // after every batch and takes the keys out of every trace.
  return openStore(config.store, { traceRetention: tracePolicy(config), traceSecrets: secrets });
}

function tracePolicy(config: GatewayConfig): TraceRetentionPolicy {
  const { traces } = config;
  const policy: TraceRetentionPolicy = {};
  if (traces.maxAgeDays !== undefined) policy.maxAgeMs = traces.maxAgeDays * 24 * HOUR;
  if (traces.maxCount !== undefined) policy.maxCount = traces.maxCount;
  if (traces.maxBytes !== undefined) policy.maxBytes = traces.maxBytes;
  return policy;
}

const HOUR = 3_600_000;

function startTracePruning(state: GatewayState): NodeJS.Timeout {
  const policy = tracePolicy(state.config);
  const prune = () => {
    if (state.store === undefined) return;
    state.store
      .pruneTraces(policy)
      .catch((error: unknown) => state.logger.warn({ err: (error as Error).message }, "trace pruning failed"));
  };
  prune();
  const timer = setInterval(prune, HOUR);
  timer.unref();
  return timer;
}

/**
 * JSON lines on stderr, written in batches (8 KB, or whatever 200 ms gathered) instead of one write each: a
 * write per request line was a few percent of a request's CPU under load. Lines still pending at exit are
 * written by pino's exit hook.
 */
function batchedStderrLogger(level: GatewayConfig["logLevel"]): { logger: Logger; stop(): void } {
  const destination = pino.destination({ fd: 2, sync: false, minLength: 8 * 1024 });
  let pending = false;
  const stream = {
    write(line: string) {
      pending = true;
      destination.write(line);
    },
    flush: (done?: (error?: Error) => void) => destination.flush(done),
  };
  const timer = setInterval(() => {
    if (!pending) return;
    pending = false;
    destination.flush();
  }, LOG_FLUSH_MS);
  timer.unref();
  return { logger: pino({ level, base: null }, stream), stop: () => clearInterval(timer) };
}

const LOG_FLUSH_MS = 200;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
