import { request as httpRequest, Agent as NodeAgent } from "node:http";
import { Pool } from "undici";

/** One kind of request, sent over and over. */
export interface LoadTarget {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  path: string;
  body: string;
  headers: Record<string, string>;
  /** Whether a whole response body is a correct answer (a stream that ended properly, JSON that parses). */
  check(text: string): boolean;
}

export interface LoadResult {
  requests: number;
  errors: number;
  /** The first failure's description, to show when errors is not 0. */
  firstError: string | undefined;
  durationMs: number;
  perSecond: number;
  p50: number;
  p90: number;
  p99: number;
  /** Time to response headers. */
  headersP50: number;
}

/**
 * A closed loop: `concurrency` workers, each on its own kept-alive connection, each sending the next request
 * as soon as the last response body is read in full, for `durationMs`.
 */
export async function closedLoop(target: LoadTarget, concurrency: number, durationMs: number): Promise<LoadResult> {
  const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1, keepAliveTimeout: 60_000 });
  const latencies: number[] = [];
  const headerTimes: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      const sent = performance.now();
      try {
        const response = await pool.request({
          path: target.path,
          method: "POST",
          headers: target.headers,
          body: target.body,
        });
        const headersAt = performance.now();
        const text = await response.body.text();
        const done = performance.now();
        if (response.statusCode !== 200 || !target.check(text)) {
          errors++;
          firstError ??= `status ${response.statusCode}: ${text.slice(0, 300)}`;
          continue;
        }
        latencies.push(done - sent);
        headerTimes.push(headersAt - sent);
      } catch (error) {
        errors++;
        firstError ??= (error as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - started;
  await pool.close();
  latencies.sort((a, b) => a - b);
  headerTimes.sort((a, b) => a - b);
  return {
    requests: latencies.length,
    errors,
    firstError,
    durationMs: elapsed,
    perSecond: (latencies.length * 1000) / elapsed,
    p50: percentile(latencies, 0.5),
    p90: percentile(latencies, 0.9),
    p99: percentile(latencies, 0.99),
    headersP50: percentile(headerTimes, 0.5),
  };
}

export function percentile(sorted: number[], fraction: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))]!;
}

/** The HTTP client layers a gateway can use towards its upstreams. */
export type ClientLayer = "undici-pool" | "node-http-keepalive" | "node-http-no-keepalive";

/**
 * Requests per second and the caller's own CPU per request for one client layer, closed loop, over
 * `durationMs`. The server is the same for every layer; what differs is the client's cost.
 */
export async function clientLayerRun(
  layer: ClientLayer,
  target: LoadTarget,
  concurrency: number,
  durationMs: number,
): Promise<{ perSecond: number; cpuMsPerRequest: number; errors: number }> {
  const send = layerSender(layer, target, concurrency);
  let requests = 0;
  let errors = 0;
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  const deadline = started + durationMs;
  const worker = async () => {
    while (performance.now() < deadline) {
      try {
        const text = await send.one();
        if (target.check(text)) requests++;
        else errors++;
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  await send.close();
  return {
    perSecond: (requests * 1000) / elapsed,
    cpuMsPerRequest: (cpu.user + cpu.system) / 1000 / Math.max(1, requests),
    errors,
  };
}

function layerSender(layer: ClientLayer, target: LoadTarget, concurrency: number) {
  if (layer === "undici-pool") {
    const pool = new Pool(target.origin, { connections: concurrency, pipelining: 1 });
    return {
      one: async () => {
        const response = await pool.request({
          path: target.path,
          method: "POST",
          headers: target.headers,
          body: target.body,
        });
        return response.body.text();
      },
      close: () => pool.close(),
    };
  }
  const agent =
    layer === "node-http-keepalive" ? new NodeAgent({ keepAlive: true, maxSockets: concurrency }) : undefined;
  const url = new URL(target.path, target.origin);
  return {
    one: () =>
      new Promise<string>((resolve, reject) => {
        const req = httpRequest(
          url,
          {
            method: "POST",
            headers: { ...target.headers, "content-length": Buffer.byteLength(target.body) },
            agent: agent ?? false,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on("data", (chunk: Buffer) => chunks.push(chunk));
            res.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
            res.on("error", reject);
          },
        );
        req.on("error", reject);
        req.end(target.body);
      }),
    close: async () => agent?.destroy(),
  };
}
