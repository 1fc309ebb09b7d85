import { createHash, timingSafeEqual } from "node:crypto";
import { ParleyError } from "../core/index.js";
import type { Context } from "./http/context.js";

/**
 * Checks client keys in constant time: every candidate is hashed to 32 bytes, so the comparison takes the same
 * time whatever the key's length or content, and all configured keys are compared (no early exit).
 */
export class KeyChecker {
  private readonly digests: Buffer[];

  constructor(keys: readonly string[]) {
    this.digests = keys.map(digest);
  }

  get enabled(): boolean {
    return this.digests.length > 0;
  }

  accepts(candidate: string | undefined): boolean {
    if (candidate === undefined || candidate === "") return false;
    const candidateDigest = digest(candidate);
    let matched = false;
    for (const known of this.digests) matched = timingSafeEqual(known, candidateDigest) || matched;
    return matched;
  }

  /** Throws a 401 unless the request carries a known key in `x-api-key` or `Authorization: Bearer`. */
  check(ctx: Context): void {
    if (!this.enabled) return;
    const key = presentedKey(ctx);
    if (key === undefined) {
      throw new ParleyError("authentication_error", "missing API key: send it as x-api-key or Authorization: Bearer");
    }
    if (!this.accepts(key)) throw new ParleyError("authentication_error", "invalid API key");
  }
}

export function presentedKey(ctx: Context): string | undefined {
  const header = ctx.req.headers["x-api-key"];
  const apiKey = Array.isArray(header) ? header[0] : header;
  if (apiKey !== undefined && apiKey !== "") return apiKey;
  const authorization = ctx.req.headers.authorization;
  if (authorization === undefined) return undefined;
  const match = /^Bearer\s+(.+)$/i.exec(authorization.trim());
  return match?.[1];
}

/**
 * The tenant a request speaks for: a digest of its API key, so that what one key stored no other key reads (the
 * key itself is never stored). Without configured keys every client is the one tenant, "".
 */
export function tenantOf(ctx: Context, keys: KeyChecker): string {
  if (!keys.enabled) return "";
  const key = presentedKey(ctx);
  return key === undefined ? "" : `key:${digest(key).toString("hex").slice(0, 32)}`;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
