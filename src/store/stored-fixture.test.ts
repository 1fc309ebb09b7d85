import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import pg from "pg";
import { afterAll, expect, inject, test } from "vitest";
import { readFixtureStore } from "./test-support/stored-fixture.js";

// Made by test-support/make-store-fixture.ts with the store as it was before it was split in three (see
// test/fixtures/SOURCES.md): what it read back then is what must be read back now.
const fixtures = new URL("../../test/fixtures/store/", import.meta.url);
const expected = (name: string) => JSON.parse(readFileSync(new URL(name, fixtures), "utf8"));
const folder = mkdtempSync(join(tmpdir(), "parley-stored-fixture-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

test("a SQLite file an earlier Parley wrote (schema step 8) opens and reads back whole", async () => {
  // A copy: opening a store may write to its file (the log, a checkpoint).
  const path = join(folder, "parley.db");
  writeFileSync(path, gunzipSync(readFileSync(new URL("parley-v8.db.gz", fixtures))));
  const read = JSON.parse(JSON.stringify(await readFixtureStore(`sqlite:${path}`)));
  expect(read).toEqual(expected("parley-v8.expected.json"));
  expect(read.traces.summaries).toHaveLength(3);
});

test("a PostgreSQL schema an earlier Parley wrote (schema step 5) opens and reads back whole", async () => {
  const server = inject("postgresUrl");
  const schema = `parley_fixture_${randomBytes(6).toString("hex")}`;
  const url = new URL(server);
  url.searchParams.set("options", `-c search_path=${schema}`);
  const admin = new pg.Pool({ connectionString: server, max: 1 });
  try {
    await admin.query(`CREATE SCHEMA ${schema}`);
    const loader = new pg.Pool({ connectionString: url.toString(), max: 1 });
    await loader.query(readFileSync(new URL("parley-postgres-v5.sql", fixtures), "utf8"));
    await loader.end();
    const read = JSON.parse(JSON.stringify(await readFixtureStore(url.toString())));
    expect(read).toEqual(expected("parley-postgres-v5.expected.json"));
    expect(read.traces.summaries).toHaveLength(3);
  } finally {
    await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await admin.end();
  }
});
