import {
  claudeCodeClient,
  nativeChatClient,
  nativeResponsesClient,
  runSession,
  SESSION_ID,
  type SessionClient,
  sessionTurn,
} from "./cache-session.js";
import {
  CACHING_SERVERS,
  type CachingServerName,
  type CachingUpstream,
  startCachingUpstream,
} from "./caching-upstream.js";
import { startTestGateway } from "./gateway-harness.js";
import type { CacheCounts } from "./prefix-cache.js";

/** One session against one caching upstream: what the upstream counted, and what the client read. */
export interface SessionRun {
  /** The upstream's counts, turn by turn. */
  upstream: CacheCounts[];
  /** The usage the client read, turn by turn. */
  client: CacheCounts[];
  /** The request bodies the upstream received. */
  bodies: Array<Record<string, unknown>>;
}

/** The session a native client of `name`'s API sends straight to it. */
export function nativeClient(name: CachingServerName): SessionClient {
  const { model } = CACHING_SERVERS[name];
  switch (name) {
    case "vllm":
    case "deepseek":
      return nativeChatClient(model);
    case "anthropic":
      return claudeCodeClient(model);
    case "openai-chat":
      return nativeChatClient(model, { promptCacheKey: SESSION_ID, maxTokensField: "max_completion_tokens" });
    case "openai-responses":
      return nativeResponsesClient(model, { promptCacheKey: SESSION_ID });
    default: {
      const never: never = name;
      throw new Error(`unknown caching server ${String(never)}`);
    }
  }
}

function finished(upstream: CachingUpstream, client: CacheCounts[]): SessionRun {
  return {
    upstream: upstream.counts,
    client,
    bodies: upstream.requests.map((request) => request.body as Record<string, unknown>),
  };
}

/** Claude Code's session through a gateway in front of a fresh caching upstream of `name`. */
export async function sessionThroughParley(name: CachingServerName, turns: number): Promise<SessionRun> {
  const server = CACHING_SERVERS[name];
  const upstream = await startCachingUpstream(name, sessionTurn);
  const gateway = await startTestGateway({
    providers: {
      cached: { type: server.api, upstream, ...(server.preset === undefined ? {} : { preset: server.preset }) },
    },
    defaultProvider: "cached",
  });
  try {
    return finished(upstream, await runSession(gateway.url, claudeCodeClient(server.model), turns));
  } finally {
    await gateway.close();
    await upstream.close();
  }
}

/** The same session as a native client of its API sends it straight to a fresh caching upstream of `name`. */
export async function sessionStraight(name: CachingServerName, turns: number): Promise<SessionRun> {
  const upstream = await startCachingUpstream(name, sessionTurn);
  try {
    return finished(upstream, await runSession(upstream.origin, nativeClient(name), turns));
  } finally {
    await upstream.close();
  }
}
