import { ParleyError } from "../../core/index.js";
import type { Context } from "../http/context.js";

/**
 * What every inspector answer carries: its own scripts and styles only (no inline script, nothing from elsewhere),
 * never inside a frame, never cached, no CORS. Bodies hold client-supplied text; the page puts all of it in the
 * document as text, and this policy stops any markup that slipped through from running.
 */
export const INSPECTOR_HEADERS: Readonly<Record<string, string>> = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
    "base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  "x-frame-options": "DENY",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
  "cross-origin-opener-policy": "same-origin",
  "cross-origin-resource-policy": "same-origin",
};

/**
 * Before an inspector route: the security headers, CORS headers taken off again (an `allowedOrigins` page may call
 * the API, not read traces), and a request a browser made for another site's page refused. Browsers say which
 * site a request comes from (`Sec-Fetch-Site`); only the gateway's own pages and typed addresses (`none`) pass.
 */
export function inspectorGuard(ctx: Context): void {
  for (const [name, value] of Object.entries(INSPECTOR_HEADERS)) ctx.res.setHeader(name, value);
  for (const name of ctx.res.getHeaderNames()) {
    if (name.startsWith("access-control-")) ctx.res.removeHeader(name);
  }
  const site = ctx.req.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") {
    throw new ParleyError("permission_error", "the inspector answers its own pages only");
  }
}
