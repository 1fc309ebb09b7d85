import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { type Logger, pino } from "pino";
import { assertNever, isParleyError } from "../core/index.js";
import type { ClientRoute, FormatAdapter } from "../formats/adapter.js";
import { FORMATS, PARLEY_FORMAT } from "../formats/registry.js";
import type { Store } from "../store/open-store.js";
import type { TraceRetentionPolicy } from "../store/traces/trace-store.js";
import { UpstreamClient } from "../upstream/index.js";
import { KeyChecker } from "./auth.js";
import type { GatewayConfig } from "./config/types.js";
import { buildProviders } from "./exchange/providers.js";
import { RouteMemory } from "./exchange/route-switch.js";
import { browserPolicy, guardBrowserRequest } from "./http/browser-guard.js";
import { answerClientError } from "./http/client-error.js";
import { compose, type Middleware } from "./http/compose.js";
import { type Context, createContext } from "./http/context.js";
import { describeError, sendError } from "./http/error-response.js";
import { apiForPath, Router } from "./http/router.js";
import { addInspectorRoutes } from "./inspector/routes.js";
import { GatewayMetrics } from "./metrics.js";
import { type CatalogueOptions, ModelCatalogue } from "./models/catalogue.js";
import { providerLines } from "./models/startup-report.js";
import { handleAppendMessages, handleCreateConversation, handleGetConversation } from "./routes/conversations.js";
import { handleCountTokens } from "./routes/count-tokens.js";
import { handleGetModel, handleHealth, handleHello, handleListModels, handleMetrics } from "./routes/info.js";
import { handleAnswer } from "./routes/messages.js";
import { handleReady } from "./routes/ready.js";
import { handleDeleteStoredAnswer, handleGetStoredAnswer } from "./routes/stored-answers.js";
import type { GatewayState } from "./state.js";

export interface GatewayOptions {
  /** Defaults to pino JSON lines on stderr at the configured level. */
  logger?: Logger;
  /** An open store to use instead of opening `config.store` (it is closed with the gateway all the same). */
  store?: Store;
  /** Replaces the providers' model discovery (tests). */
  catalogue?: Partial<Pick<CatalogueOptions, "discover" | "refreshMs" | "retryMs" | "timeoutMs">>;
}

export interface RunningGateway {
  url: string;
  state: GatewayState;
  /** Settles once every provider has answered `GET /models` (or failed to). */
  discovery: Promise<void>;
  /** One line per provider: URL, preset, the models it serves and their limits, or why it gave no list. */
  describeProviders(): string[];
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
  const secretValues = [...secrets, ...config.apiKeys];
  const store = options.store ?? (await openConfiguredStore(config, secretValues));
  const catalogue = new ModelCatalogue(providers, {
    timeoutMs: DISCOVERY_TIMEOUT_MS,
    refreshMs: DISCOVERY_REFRESH_MS,
    retryMs: DISCOVERY_RETRY_MS,
    secrets: secretValues,
    ...options.catalogue,
  });
  const state: GatewayState = {
    config,
    providers,
    catalogue,
    upstream: new UpstreamClient({
      timeouts: config.timeouts,
      retry: config.retries,
      secrets: [...secrets, ...config.apiKeys],
      maxAnswerBytes: config.limits.maxAnswerBytes,
      onRetry: (attempt, delayMs, error, request) =>
        logger.warn({ requestId: request.requestId, attempt, delayMs, err: error.message }, "retrying upstream"),
    }),
    store,
    metrics,
    logger,
    keys: new KeyChecker(config.apiKeys, config.keyTenants),
    openStreams: new Set(),
    routes: new RouteMemory(),
    secrets: [...secrets, ...config.apiKeys],
  };
  const router = buildRouter(state);
  const browser = browserPolicy(config.host, config.allowedHosts, config.allowedOrigins);
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
    async (ctx, next) => {
      ctx.api = apiForPath(ctx.path);
      if (!guardBrowserRequest(ctx, browser)) await next();
    },
    async (ctx) => {
      const route = router.match(ctx);
      ctx.api = route.api;
      ctx.route = `${route.method} ${route.pattern}`;
      if (route.auth) state.keys.check(ctx);
      await route.handler(ctx);
    },
  ] satisfies Middleware[]);

  // A request without `Host` (HTTP/1.0 tools, raw sockets) is answered like any other, in its route's shape, not with
  // Node's bare 400: the browser guard only needs `Host` when a browser sent one, and browsers always do.
  const server: Server = createServer({ keepAliveTimeout: 65_000, requireHostHeader: false }, (req, res) => {
    void handle(createContext(req, res));
  });
  server.on("clientError", (error, socket) => {
    answerClientError(error, socket);
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
  const discovery = catalogue.start();
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
  return {
    url: `http://${host}:${address.port}`,
    state,
    discovery,
    describeProviders: () => providerLines(state),
    close,
  };
}

function buildRouter(state: GatewayState): Router {
  const bind = (handler: (ctx: Context, state: GatewayState) => Promise<void>) => (ctx: Context) => handler(ctx, state);
  const router = new Router();
  // Each API's own routes, as its adapter lists them.
  for (const format of FORMATS) {
    for (const route of format.client.routes) {
      router.add({
        method: route.method,
        pattern: route.path,
        api: format.id,
        auth: true,
        handler: clientRouteHandler(state, format, route),
      });
    }
  }
  if (state.config.inspector.enabled) addInspectorRoutes(router, state);
  // Parley's own routes.
  return router
    .add({
      method: "POST",
      pattern: "/v1/conversations",
      api: PARLEY_FORMAT,
      auth: true,
      handler: bind(handleCreateConversation),
    })
    .add({
      method: "POST",
      pattern: "/v1/conversations/{id}/messages",
      api: PARLEY_FORMAT,
      auth: true,
      handler: bind(handleAppendMessages),
    })
    .add({
      method: "GET",
      pattern: "/v1/conversations/{id}",
      api: PARLEY_FORMAT,
      auth: true,
      handler: bind(handleGetConversation),
    })
    .add({ method: "GET", pattern: "/health", api: PARLEY_FORMAT, auth: false, handler: handleHealth })
    .add({ method: "HEAD", pattern: "/health", api: PARLEY_FORMAT, auth: false, handler: handleHealth })
    .add({ method: "GET", pattern: "/ready", api: PARLEY_FORMAT, auth: false, handler: bind(handleReady) })
    .add({ method: "HEAD", pattern: "/ready", api: PARLEY_FORMAT, auth: false, handler: bind(handleReady) })
    .add({ method: "HEAD", pattern: "/api/hello", api: PARLEY_FORMAT, auth: false, handler: handleHello })
    .add({ method: "GET", pattern: "/metrics", api: PARLEY_FORMAT, auth: true, handler: bind(handleMetrics) });
}

function clientRouteHandler(
  state: GatewayState,
  format: FormatAdapter,
  route: ClientRoute,
): (ctx: Context) => Promise<void> {
  switch (route.kind) {
    case "answer":
    case "compact":
      return (ctx) => handleAnswer(ctx, state, format, route);
    case "count-tokens":
      return (ctx) => handleCountTokens(ctx, state, format, route);
    case "models":
      return (ctx) => handleListModels(ctx, state, format);
    case "model":
      return (ctx) => handleGetModel(ctx, state, format);
    case "stored-answer":
      return (ctx) => handleGetStoredAnswer(ctx, state, format);
    case "delete-stored-answer":
      return (ctx) => handleDeleteStoredAnswer(ctx, state, format);
    default:
      return assertNever(route.kind, "route kind");
  }
}

async function openConfiguredStore(config: GatewayConfig, secrets: readonly string[]): Promise<Store> {
  const { openStore } = await import("../store/open-store.js");
  // The configured retention, not the store's default, from the first pruning on; the trace writer keeps it
  // after every batch and takes the keys out of every trace.
  return openStore(config.store, {
    traceRetention: tracePolicy(config),
    traceSecrets: secrets,
    deadlineMs: config.timeouts.storeMs,
  });
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
    state.store.traces
      .prune(policy)
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

/** `GET /models` at start-up and after: short, since a model list is small and a local server answers at once. */
const DISCOVERY_TIMEOUT_MS = 5_000;
/** A list older than this is asked again, in the background, on the next request. */
const DISCOVERY_REFRESH_MS = 5 * 60_000;
/** A provider that has not answered is asked again before a request, at most this often. */
const DISCOVERY_RETRY_MS = 2_000;

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
