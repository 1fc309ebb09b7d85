import { isIP } from "node:net";
import { ParleyError } from "../../core/index.js";
import type { Context } from "./context.js";

/**
 * Web pages must not drive the gateway. A page the user opens can send requests to any address, the loopback
 * included: a cross-origin POST with a "simple" content type (text/plain, a form) goes without the browser
 * asking first, and a page whose name was re-pointed at 127.0.0.1 (DNS rebinding) can even read the answers,
 * as the browser then takes the gateway for the page's own origin. So:
 *
 * - `Host` must name the gateway: an IP literal (a page cannot rebind an address), `localhost`, the name it
 *   listens on, or a configured `allowedHosts` name. A rebinding page's requests carry the page's own name.
 * - `Origin`, sent by browsers on every cross-origin request and on every POST, must be the gateway's own (the
 *   inspector page it serves calls its API) or a configured `allowedOrigins` entry, which also gets the CORS
 *   headers a browser needs to read the answer. Clients that are not browsers (the SDKs, Claude Code, curl) send
 *   no `Origin` and are not affected.
 * - JSON routes take JSON content types only (`body.ts`), so a cross-origin POST needs the browser's preflight,
 *   which is never granted to an origin that is not allowed.
 */
export interface BrowserPolicy {
  /** Host names (lower case, no port) the gateway answers to besides IP literals and `localhost`. */
  hosts: ReadonlySet<string>;
  /** Origins (`scheme://host[:port]`, as `URL.origin` writes them) whose pages may call the gateway. */
  origins: ReadonlySet<string>;
  /** Host headers already judged: a client sends the same one on every request, so it is parsed once. */
  judged: Map<string, boolean>;
}

export function browserPolicy(listenHost: string, allowedHosts: readonly string[], allowedOrigins: readonly string[]) {
  const hosts = new Set(allowedHosts.map((host) => host.toLowerCase()));
  if (isIP(unbracket(listenHost)) === 0) hosts.add(listenHost.toLowerCase());
  return { hosts, origins: new Set(allowedOrigins.map(normalizeOrigin)), judged: new Map() } satisfies BrowserPolicy;
}

/** The configured form of an origin, as browsers send it (`https://app.example`, no trailing slash). */
export function normalizeOrigin(origin: string): string {
  return new URL(origin).origin;
}

/**
 * Refuses (403 permission_error) a request whose `Host` does not name the gateway or whose `Origin` is neither
 * its own nor allowed; for an allowed origin, sets the CORS headers. Returns true when the request was a CORS
 * preflight, answered here.
 */
export function guardBrowserRequest(ctx: Context, policy: BrowserPolicy): boolean {
  const host = ctx.req.headers.host;
  if (host !== undefined && !hostAllowed(host, policy)) {
    throw new ParleyError(
      "permission_error",
      "this gateway does not answer to that Host name (a DNS-rebinding page would send one): list the name in allowedHosts",
    );
  }
  const origin = ctx.req.headers.origin;
  if (origin === undefined) return false;
  if (policy.origins.has(origin)) {
    ctx.res.setHeader("access-control-allow-origin", origin);
    ctx.res.setHeader("vary", "Origin");
    ctx.res.setHeader("access-control-expose-headers", "request-id, x-request-id, x-parley-lossy, retry-after");
    if (ctx.method !== "OPTIONS") return false;
    ctx.res.writeHead(204, {
      "access-control-allow-methods": "GET, POST, HEAD",
      "access-control-allow-headers": ctx.req.headers["access-control-request-headers"] ?? "",
      "access-control-max-age": "600",
    });
    ctx.res.end();
    return true;
  }
  if (host !== undefined && sameOrigin(origin, host)) return false;
  throw new ParleyError(
    "permission_error",
    `requests from web pages of other origins are refused (Origin: ${origin.slice(0, 200)}): list the origin in allowedOrigins`,
  );
}

function hostAllowed(host: string, policy: BrowserPolicy): boolean {
  const known = policy.judged.get(host);
  if (known !== undefined) return known;
  const name = hostname(host);
  const allowed =
    name !== undefined &&
    (isIP(name) !== 0 || name === "localhost" || name.endsWith(".localhost") || policy.hosts.has(name));
  // Bounded: a client inventing a Host per request gets no entry past the first few hundred.
  if (policy.judged.size < 256) policy.judged.set(host, allowed);
  return allowed;
}

/** An Origin naming the very host and port the request was sent to: the gateway's own pages. */
function sameOrigin(origin: string, host: string): boolean {
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  const port = url.port === "" ? (url.protocol === "https:" ? "443" : "80") : url.port;
  const separator = host.lastIndexOf(":");
  const hostPort = separator > host.lastIndexOf("]") ? host.slice(separator + 1) : "";
  const ownPort = hostPort === "" ? (url.protocol === "https:" ? "443" : "80") : hostPort;
  return unbracket(url.hostname.toLowerCase()) === hostname(host) && port === ownPort;
}

/** The name in a Host header, lower case, without port or IPv6 brackets; undefined when it is not one. */
function hostname(host: string): string | undefined {
  try {
    return unbracket(new URL(`http://${host}`).hostname.toLowerCase());
  } catch {
    return undefined;
  }
}

function unbracket(name: string): string {
  return name.startsWith("[") && name.endsWith("]") ? name.slice(1, -1) : name;
}
