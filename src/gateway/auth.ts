import { createHash, timingSafeEqual } from "node:crypto";
import { ParleyError } from "../core/index.js";
import { findFormat } from "../formats/registry.js";
import type { Context } from "./http/context.js";

/**
 * Checks client keys in constant time: every candidate is hashed to 32 bytes, so the comparison takes the same
 * time whatever the key's length or content, and all configured keys are compared (no early exit).
 *
 * A known key also says whose stored conversations the request reaches: the tenant the key names in the config,
 * else a tenant of the key's own, named after a digest of it (the key itself is never stored). Without keys,
 * the gateway has one user, `DEFAULT_OWNER`, which `createContext` sets.
 */
export class KeyChecker {
  private readonly known: Array<{ digest: Buffer; tenant: string }>;

  constructor(keys: readonly string[], tenants: Readonly<Record<string, string>> = {}) {
    this.known = keys.map((key) => {
      const keyDigest = digest(key);
      return { digest: keyDigest, tenant: tenants[key] ?? `key-${keyDigest.toString("hex").slice(0, 32)}` };
    });
  }

  get enabled(): boolean {
    return this.known.length > 0;
  }

  accepts(candidate: string | undefined): boolean {
    return this.tenantOf(candidate) !== undefined;
  }

  /** The tenant of a known key; undefined for any other. */
  tenantOf(candidate: string | undefined): string | undefined {
    if (candidate === undefined || candidate === "") return undefined;
    const candidateDigest = digest(candidate);
    let tenant: string | undefined;
    for (const known of this.known) if (timingSafeEqual(known.digest, candidateDigest)) tenant ??= known.tenant;
    return tenant;
  }

  /**
   * Throws a 401 unless the request carries a known key in `x-api-key`, `Authorization: Bearer` or where the route's
   * API puts its key (`x-goog-api-key`, `?key=`), and sets `ctx.tenant` to the key's tenant.
   */
  check(ctx: Context): void {
    if (!this.enabled) return;
    const key = presentedKey(ctx);
    if (key === undefined) {
      throw new ParleyError("authentication_error", "missing API key: send it as x-api-key or Authorization: Bearer");
    }
    const tenant = this.tenantOf(key);
    if (tenant === undefined) throw new ParleyError("authentication_error", "invalid API key");
    ctx.tenant = tenant;
  }
}

export function presentedKey(ctx: Context): string | undefined {
  const apiKey = headerValue(ctx, "x-api-key");
  if (apiKey !== undefined) return apiKey;
  const authorization = ctx.req.headers.authorization;
  const match = authorization === undefined ? null : /^Bearer\s+(.+)$/i.exec(authorization.trim());
  if (match?.[1] !== undefined) return match[1];
  const credentials = findFormat(ctx.api)?.client.credentials;
  for (const name of credentials?.headers ?? []) {
    const value = headerValue(ctx, name);
    if (value !== undefined) return value;
  }
  for (const name of credentials?.queryParameters ?? []) {
    const value = ctx.query.get(name);
    if (value !== null && value !== "") return value;
  }
  return undefined;
}

function headerValue(ctx: Context, name: string): string | undefined {
  const header = ctx.req.headers[name];
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined || value === "" ? undefined : value;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
