import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, describe, expect, inject, test } from "vitest";
import { expectBatchesIntact, runStoreContract } from "../contract.suite.js";
import { openStore } from "../open-store.js";
import { appendBatch, appendBatches } from "../test-support/batches.js";
import { startHelper } from "../test-support/run-child.js";
import { postgresMigrations } from "./migrations.js";
import { PostgresStore } from "./postgres-store.js";

const serverUrl = inject("postgresUrl");
const admin = new pg.Pool({ connectionString: serverUrl, max: 2 });
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
});

/** A store URL on an empty schema of its own, so tests and files never see each other's rows. */
async function freshSchemaUrl(): Promise<string> {
  const schema = `parley_test_${randomBytes(6).toString("hex")}`;
  await admin.query(`CREATE SCHEMA ${schema}`);
  schemas.push(schema);
  const url = new URL(serverUrl);
  url.searchParams.set("options", `-c search_path=${schema}`);
  return url.toString();
}

runStoreContract("postgres", async (options) =>
  PostgresStore.open(new pg.Pool({ connectionString: await freshSchemaUrl() }), options),
);

describe("postgres store shared by several gateways", () => {
  test("two pools starting at once migrate once, and record the version", async () => {
    const url = await freshSchemaUrl();
    const stores = await Promise.all([openStore(url), openStore(url), openStore(url)]);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const versions = await pool.query("SELECT version FROM schema_migrations ORDER BY version");
    await pool.end();
    expect(versions.rows).toEqual(postgresMigrations.map(({ version }) => ({ version })));
    await Promise.all(stores.map((store) => store.close()));
  });

  test("appends from two pools and a child process to one conversation never interleave or collide", async () => {
    const url = await freshSchemaUrl();
    const [first, second] = await Promise.all([openStore(url), openStore(url)]);
    const { id } = await first!.createConversation();
    const appendAll = async (store: typeof first, label: string) => {
      for (let batch = 0; batch < 40; batch++) await store!.appendMessages(id, appendBatch(label, batch));
    };
    // The child signals once its store is open, so all three writers run at the same time.
    const child = startHelper("append-child", [url, id, "40", "c"]);
    await child.ready;
    await Promise.all([appendAll(first, "a"), appendAll(second, "b"), child.done]);
    const loaded = (await second!.loadConversation(id))!;
    expectBatchesIntact(loaded, [...appendBatches("a", 40), ...appendBatches("b", 40), ...appendBatches("c", 40)]);
    expect(loaded.map((stored) => stored.seq)).toEqual(loaded.map((_, index) => index + 1));
    await Promise.all([first!.close(), second!.close()]);
  });
});
