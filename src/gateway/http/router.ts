import { ParleyError } from "../../core/index.js";
import { FORMATS, PARLEY_FORMAT } from "../../formats/registry.js";
import type { ApiShape, Context } from "./context.js";

export type Handler = (ctx: Context) => Promise<void>;

export interface RouteDefinition {
  method: string;
  /** Segments in braces capture: `/v1/conversations/{id}`. */
  pattern: string;
  api: ApiShape;
  /** Whether an API key is needed (when keys are configured). */
  auth: boolean;
  handler: Handler;
}

interface CompiledRoute extends RouteDefinition {
  segments: string[];
  label: string;
}

/** Exact paths by map lookup; patterned paths by segment match. A handful of routes needs nothing more. */
export class Router {
  private readonly exact = new Map<string, CompiledRoute>();
  private readonly patterned: CompiledRoute[] = [];
  private readonly knownPaths = new Set<string>();

  add(route: RouteDefinition): this {
    const compiled: CompiledRoute = {
      ...route,
      segments: route.pattern.split("/"),
      label: `${route.method} ${route.pattern}`,
    };
    if (route.pattern.includes("{")) this.patterned.push(compiled);
    else this.exact.set(`${route.method} ${route.pattern}`, compiled);
    this.knownPaths.add(route.pattern);
    return this;
  }

  /** The route and its path parameters; throws a 404 or 405 in the route's shape when none fits. */
  match(ctx: Context): CompiledRoute {
    const path = ctx.path.length > 1 && ctx.path.endsWith("/") ? ctx.path.slice(0, -1) : ctx.path;
    const exact = this.exact.get(`${ctx.method} ${path}`);
    if (exact !== undefined) return exact;
    const parts = path.split("/");
    let pathKnown = this.knownPaths.has(path);
    for (const route of this.patterned) {
      const params = matchSegments(route.segments, parts);
      if (params === undefined) continue;
      if (route.method !== ctx.method) {
        pathKnown = true;
        continue;
      }
      ctx.params = params;
      return route;
    }
    if (pathKnown)
      throw new ParleyError("invalid_request_error", `method ${ctx.method} is not allowed on ${path}`, { status: 405 });
    throw new ParleyError("not_found_error", `no route for ${ctx.method} ${path}`);
  }
}

/**
 * The error shape of a path before any route is matched (and of a path no route has): the API whose prefix it
 * is under (`/v1/chat/` is OpenAI's, `/v1/chat` too), else Parley's own.
 */
export function apiForPath(path: string): ApiShape {
  const under = path.endsWith("/") ? path : `${path}/`;
  const owner = FORMATS.find((format) => format.client.pathPrefix && under.startsWith(format.client.pathPrefix));
  return owner?.id ?? PARLEY_FORMAT;
}

/**
 * A segment in braces captures the whole segment (`{id}`), or its head before a literal tail
 * (`{model}:generateContent`, Google's custom methods).
 */
function matchSegments(pattern: string[], parts: string[]): Record<string, string> | undefined {
  if (pattern.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let index = 0; index < pattern.length; index++) {
    const expected = pattern[index]!;
    const actual = parts[index]!;
    const close = expected.startsWith("{") ? expected.indexOf("}") : -1;
    if (close !== -1) {
      const tail = expected.slice(close + 1);
      if (actual.length <= tail.length || !actual.endsWith(tail)) return undefined;
      try {
        params[expected.slice(1, close)] = decodeURIComponent(actual.slice(0, actual.length - tail.length));
      } catch {
        return undefined;
      }
    } else if (expected !== actual) {
      return undefined;
    }
  }
  return params;
}
