import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

/** Starts a TypeScript helper of this folder in its own Node process (through tsx, as the tests run). */
export function spawnHelper(name: string, args: string[]): ChildProcess {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  return spawn(process.execPath, ["--import", "tsx", script, ...args], { stdio: ["ignore", "pipe", "pipe"] });
}

export interface RunningHelper {
  /** Resolves when the helper prints its first line (it has opened the store). */
  ready: Promise<void>;
  /** Resolves with all it printed when it exits 0; rejects with its stderr otherwise. */
  done: Promise<string>;
}

export function startHelper(name: string, args: string[]): RunningHelper {
  const child = spawnHelper(name, args);
  let stdout = "";
  let stderr = "";
  let markReady: () => void = () => {};
  const ready = new Promise<void>((resolve) => {
    markReady = resolve;
  });
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
    if (stdout.includes("\n")) markReady();
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = new Promise<string>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => {
      markReady();
      if (code === 0) resolve(stdout);
      else reject(new Error(`${name} exited ${code}: ${stderr}`));
    });
  });
  return { ready, done };
}
