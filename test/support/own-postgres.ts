import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, loadEmbeddedPostgres } from "../postgres-server.js";

/**
 * A PostgreSQL server of one test's own (not the run's shared one), to stop, kill and restart: `SIGSTOP` stands for
 * a server that hangs, `SIGKILL` for one that dies. The postmaster and every backend it forked get the signal.
 */
export interface OwnPostgres {
  url: string;
  /** Sends `signal` to the postmaster and all its processes. */
  signal(signal: "SIGSTOP" | "SIGCONT"): void;
  /** Kills every process of the server at once, as a crash or an out-of-memory kill does. */
  kill(): Promise<void>;
  /** Starts the server again on the same files (after `kill`). */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

export async function startOwnPostgres(): Promise<OwnPostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), "parley-own-pg-"));
  const port = await freePort();
  const make = () =>
    new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: "parley",
      password: "parley",
      persistent: true,
      createPostgresUser: process.getuid?.() === 0,
      onLog: () => {},
      onError: () => {},
    });
  let server = make();
  await server.initialise();
  await server.start();
  await server.createDatabase("parley_test");
  const postmaster = () => {
    const pid = (server as unknown as { process?: { pid?: number } }).process?.pid;
    if (pid === undefined) throw new Error("the server is not running");
    return pid;
  };
  const children = (pid: number): number[] => {
    try {
      return execFileSync("ps", ["-o", "pid=", "--ppid", String(pid)], { encoding: "utf8" })
        .split("\n")
        .map((line) => Number(line.trim()))
        .filter((child) => child > 0);
    } catch {
      return []; // ps exits 1 when there are none
    }
  };
  const send = (pids: number[], signal: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        process.kill(pid, signal);
      } catch {
        // gone already
      }
    }
  };
  return {
    url: `postgres://parley:parley@127.0.0.1:${port}/parley_test`,
    signal(signal) {
      const pid = postmaster();
      // Stopped first, resumed last: a stopped postmaster forks no new backend meanwhile.
      if (signal === "SIGSTOP") send([pid, ...children(pid)], signal);
      else send([...children(pid), pid], signal);
    },
    async kill() {
      const pid = postmaster();
      const exited = new Promise<void>((resolve) =>
        (server as unknown as { process: NodeJS.EventEmitter }).process.once("exit", () => resolve()),
      );
      send([pid, ...children(pid)], "SIGKILL");
      await exited;
      (server as unknown as { process?: unknown }).process = undefined;
    },
    async restart() {
      server = make();
      await server.start();
    },
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
