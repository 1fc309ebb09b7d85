import type { TestProject } from "vitest/node";
import { startTestPostgres, type TestPostgres } from "./postgres-server.js";

let postgres: TestPostgres | undefined;

/** Starts one PostgreSQL server for the whole run; tests read its URL from `inject("postgresUrl")`. */
export async function setup(project: TestProject): Promise<void> {
  const url = process.env.PARLEY_TEST_POSTGRES_URL;
  if (url) {
    project.provide("postgresUrl", url);
    return;
  }
  postgres = await startTestPostgres();
  project.provide("postgresUrl", postgres.url);
}

export async function teardown(): Promise<void> {
  await postgres?.stop();
}

declare module "vitest" {
  export interface ProvidedContext {
    postgresUrl: string;
  }
}
