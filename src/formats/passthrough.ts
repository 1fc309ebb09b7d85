// The passthrough face of a format: a client and its provider speaking the same API.
// `adapter.ts` puts the faces together.
import type { Converted, Message } from "../core/index.js";

/**
 * A client and its provider speaking the same API: the client's own request goes on with only what must change
 * (the model), and the provider's answer comes back as it came (contract invariant 8).
 */
export interface SameFormatPassthrough {
  request(input: PassthroughRequest): Converted<unknown> & { bodyText?: string };
  /**
   * The provider's whole answer as the client gets it: as it came, only the model named as the client asked, under
   * the id Parley keeps it by (`answerId`) where the API has such ids; with a `signatureOwner`, its reasoning wrapped
   * in envelopes naming the provider and the key behind it (`binding`), as its streamed answers' are.
   */
  response(body: Record<string, unknown>, options: PassthroughAnswer): unknown;
}

export interface PassthroughAnswer {
  clientModel: string;
  /** The provider's `signatureOwner`: the reasoning it made reaches the client in envelopes naming it. */
  signatureOwner?: string;
  /**
   * The key or deployment behind that provider (`ReasoningOrigin.binding`), written into those envelopes, so that
   * what it sealed or signed goes back unmodified only while the same key stands behind it.
   */
  binding?: string;
  /** The id Parley keeps the answer by. */
  answerId?: string;
}

export interface PassthroughRequest {
  /** The client's body as parsed, and its text as sent. */
  body: Record<string, unknown>;
  text: string;
  clientModel: string;
  upstreamModel: string;
  /** The stored messages put in front of the client's (none without a conversation). */
  stored: readonly Message[];
  /** The whole history (stored and the client's) when repair changed it; absent when repair changed nothing. */
  repaired?: readonly Message[];
  /** The provider's `signatureOwner`: the signatures it made go back to it out of their envelopes. */
  signatureOwner?: string;
  /** The provider's name: reasoning whose envelope names it goes back to it as it made it. */
  provider?: string;
  /** The request asks for its conversation compacted (`ConversationRequest.compact`), which the body may not say. */
  compact?: boolean;
  /** The conversation's prompt-cache key (`ConversationRequest.cacheKey`), for an API that has a field for it. */
  cacheKey?: string;
  /**
   * The client called its API's compaction endpoint and the provider has one (`UpstreamConnection.compactEndpoint`):
   * the body is for that endpoint, which compacts what it is given (no trigger is added).
   */
  endpoint?: "compact";
}
