import { existsSync, readdirSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join } from "node:path";

/**
 * A `node --cpu-prof` profile summarized by self time: each sample's function is traced back through the bundle's
 * source map to its source file, and the files are grouped by what they do. Idle time is left out, so the shares
 * are of the time the thread was busy.
 */

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileSummary {
  /** Busy milliseconds of the thread (idle excluded). */
  busyMs: number;
  categories: Array<[string, number]>;
  functions: Array<[string, number]>;
}

/** The profiles `--cpu-prof-dir` holds, the main thread's first (a worker's file name has a higher thread id). */
export function profilesIn(folder: string): string[] {
  return readdirSync(folder)
    .filter((name) => name.endsWith(".cpuprofile"))
    .sort()
    .map((name) => join(folder, name));
}

export function summarizeProfile(path: string, bundles: readonly string[]): ProfileSummary {
  const profile = JSON.parse(readFileSync(path, "utf8")) as Profile;
  const maps = new Map<string, SourceMap>();
  for (const bundle of bundles) {
    // The build ships no source maps: without one a bundle's frames are named by its file and function.
    if (!existsSync(`${bundle}.map`)) continue;
    maps.set(bundle, new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, "utf8"))));
  }
  const selfMicros = new Map<number, number>();
  profile.samples.forEach((id, index) => {
    selfMicros.set(id, (selfMicros.get(id) ?? 0) + (profile.timeDeltas[index] ?? 0));
  });
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, micros] of selfMicros) {
    const frame = byId.get(id)!.callFrame;
    if (frame.functionName === "(idle)") continue;
    const bundle = [...maps.keys()].find((file) => frame.url.endsWith(file.split("/").pop()!));
    let source: string | undefined;
    if (bundle !== undefined && frame.lineNumber >= 0) {
      const entry = maps.get(bundle)!.findEntry(frame.lineNumber, frame.columnNumber) as { originalSource?: string };
      source = entry.originalSource?.replace(/^(?:.*?\/)?(src|node_modules)\//, "$1/");
    }
    const category = categoryOf(source, frame.functionName, frame.url);
    busy += micros;
    categories.set(category, (categories.get(category) ?? 0) + micros);
    // A file outside the sources by its name alone: the report never shows where the repository lies.
    const file =
      source ?? (frame.url === "" ? "native" : frame.url.startsWith("file:") ? frame.url.split("/").pop()! : frame.url);
    const name = `${file} ${frame.functionName || "(anonymous)"}`;
    functions.set(name, (functions.get(name) ?? 0) + micros);
  }
  const sorted = (map: Map<string, number>) =>
    [...map].sort((a, b) => b[1] - a[1]).map(([name, micros]): [string, number] => [name, micros / busy]);
  return { busyMs: busy / 1000, categories: sorted(categories), functions: sorted(functions) };
}

function categoryOf(source: string | undefined, name: string, url: string): string {
  if (name === "(garbage collector)") return "garbage collection";
  if (source !== undefined) {
    if (source.startsWith("node_modules/undici")) return "undici (the upstream client)";
    if (/^node_modules\/(pino|sonic-boom|quick-format|safe-stable|fast-redact|on-exit)/.test(source)) {
      return "logging (pino, one info line a request)";
    }
    if (source.startsWith("node_modules/")) return `dependency ${source.split("/")[1]}`;
    if (/^src\/(formats|core|stream|text|repair)\//.test(source)) return "conversion (formats, core, stream, repair)";
    if (source.startsWith("src/store/")) return "traces and store (this thread's part)";
    if (source.startsWith("src/upstream/")) return "upstream requests (src/upstream)";
    if (source.startsWith("src/gateway/")) return "gateway (routing, JSON bodies, headers, metrics)";
    return `other: ${source}`;
  }
  if (url.startsWith("node:")) return "node:http, streams, events (JS)";
  if (/^(writev|writeString|writeBuffer|writeUtf8String|writeLatin1String|shutdown|readStart|readStop)$/.test(name)) {
    return "socket writes and reads (native)";
  }
  if (name.startsWith("wasm-function") || name === "GenericJSToWasmWrapper") return "llhttp (undici's parser, wasm)";
  if (name === "postMessage" || name === "structuredClone") return "postMessage to the trace writer (native)";
  if (name === "(program)") return "V8 and native, unattributed";
  return "other native";
}
