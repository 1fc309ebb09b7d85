import { findFormat } from "../../formats/registry.js";
import type { GatewayConfig } from "../config/types.js";
import { conversationCacheKey } from "../exchange/cache-key.js";
import { type ClientRequest, planUpstream } from "../exchange/plan.js";
import { buildProviders, type ProviderRuntime } from "../exchange/providers.js";
import { conversationStart } from "../exchange/route-switch.js";
import { refuseHeldHistory } from "../held-history.js";
import { expectObject, parseJsonText } from "../http/body.js";
import { approximateInputTokens, countInputTokens } from "../token-count.js";
import type { NotOffLoop, PlanInput, PlannedBody, ReadInput, ReadSummary } from "./protocol.js";

/**
 * The work proportional to a request's size (parsing, validation and conversion, repair, encoding, serialisation)
 * as the prepare thread does it, in the same functions as the request path on the event loop: what comes out is
 * the same body text and the same reports, byte for byte (`prepare.test.ts`).
 */

/** A request read on the thread: the whole of it, kept there until it is planned. */
export type ReadRequest = ClientRequest;

export function readRequest(input: ReadInput): { request: ReadRequest; summary: ReadSummary } | NotOffLoop {
  const format = findFormat(input.format);
  const route = format?.client.routes[input.route];
  if (format === undefined || route === undefined) throw new Error(`unknown route ${input.format}#${input.route}`);
  const { value, text } = parseJsonText(input.text);
  const raw = expectObject(value);
  const converted = format.client.readRequest(raw, {
    route,
    params: input.params,
    query: new URLSearchParams(input.query),
  });
  const asked = converted.state;
  const keeps = asked !== undefined && (asked.previous !== undefined || (asked.kept && input.hasStore));
  if (keeps || converted.value.compact === true) return { onLoop: true };
  const core = converted.value;
  const request: ReadRequest = {
    format,
    clientModel: core.model,
    stream: core.stream === true,
    core,
    raw,
    rawText: text,
    historyCount: 0,
    lossy: converted.lossy,
    ...(converted.includeUsage === undefined ? {} : { includeUsage: converted.includeUsage }),
    ...(asked === undefined ? {} : { state: { kept: false } }),
  };
  const summary: ReadSummary = {
    clientModel: request.clientModel,
    stream: request.stream,
    slim: { ...core, messages: [] },
    lossy: request.lossy,
    cacheKey: conversationCacheKey(input.sessionHeaders, core, undefined),
    conversationStart: conversationStart(core),
    inputEstimate: approximateInputTokens(core),
  };
  if (request.includeUsage !== undefined) summary.includeUsage = request.includeUsage;
  if (request.state !== undefined) summary.state = request.state;
  return { request, summary };
}

/** The exact (o200k_base) count of a read request's prompt. */
export function countRequestTokens(request: ReadRequest): Promise<number> {
  return countInputTokens(request.core);
}

/** The thread's own providers, built from the gateway's configuration as the event loop built its own. */
export class ThreadProviders {
  private readonly runtimes: Record<string, ProviderRuntime>;

  constructor(private readonly config: GatewayConfig) {
    this.runtimes = buildProviders(config);
  }

  /** The provider as the event loop has it: rebuilt with the preset its server was recognised as, if it was. */
  provider(name: string, preset: string | undefined): ProviderRuntime {
    let runtime = this.runtimes[name];
    if (runtime === undefined) throw new Error(`unknown provider '${name}'`);
    if (preset !== undefined && runtime.connection.modelFacts?.preset !== preset) {
      const providers = { ...this.config.providers, [name]: { ...runtime.config, preset } };
      runtime = buildProviders({ ...this.config, providers })[name]!;
      this.runtimes[name] = runtime;
    }
    return runtime;
  }
}

export function planRequest(request: ReadRequest, providers: ThreadProviders, input: PlanInput): PlannedBody {
  const provider = providers.provider(input.provider, input.preset);
  refuseHeldHistory(request, provider);
  const core = input.maxTokens === undefined ? request.core : { ...request.core, maxTokens: input.maxTokens };
  const fitted: ClientRequest = { ...request, core };
  if (input.cacheKey !== undefined) fitted.cacheKey = input.cacheKey;
  const plan = planUpstream(
    fitted,
    provider,
    input.upstreamModel,
    input.reasoningAsText ? { reasoningAsText: true } : {},
  );
  return { bodyText: plan.bodyText ?? JSON.stringify(plan.body), lossy: plan.lossy, repair: plan.repair };
}
