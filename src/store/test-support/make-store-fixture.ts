/**
 * Writes the fixtures of `src/store/stored-fixture.test.ts`: a store as this code writes it and the JSON of
 * everything read back from it, which every later version must open and read back whole. Run from the repository's
 * root: `npx tsx src/store/test-support/make-store-fixture.ts` for SQLite (`test/fixtures/store/parley-v8.db.gz`,
 * the file gzipped), `... make-store-fixture.ts postgres://...` for PostgreSQL (`parley-postgres-v5.sql`, the
 * tables as SQL, from a schema of its own that is dropped after).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import pg from "pg";
import { openStore } from "../open-store.js";
import { postgresMigrations } from "../postgres/migrations.js";
import { dumpPostgresSchema, fillFixtureStore, readFixtureStore } from "./stored-fixture.js";

const FIXTURES = "test/fixtures/store";
const server = process.argv[2];

if (server === undefined) {
  const folder = mkdtempSync(join(tmpdir(), "parley-fixture-"));
  const path = join(folder, "parley.db");
  const store = await openStore(`sqlite:${path}`, { traceRetention: false });
  await fillFixtureStore(store);
  await store.close();
  const expected = await readFixtureStore(`sqlite:${path}`);
  writeFileSync(`${FIXTURES}/parley-v8.db.gz`, gzipSync(readFileSync(path), { level: 9 }));
  writeFileSync(`${FIXTURES}/parley-v8.expected.json`, `${JSON.stringify(expected, null, 2)}\n`);
  rmSync(folder, { recursive: true, force: true });
} else {
  const schema = `parley_fixture_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Pool({ connectionString: server, max: 1 });
  await admin.query(`CREATE SCHEMA ${schema}`);
  try {
    const url = new URL(server);
    url.searchParams.set("options", `-c search_path=${schema}`);
    const store = await openStore(url.toString(), { traceRetention: false });
    await fillFixtureStore(store);
    await store.close();
    const expected = await readFixtureStore(url.toString());
    const reader = new pg.Pool({ connectionString: url.toString(), max: 1 });
    const dump = await dumpPostgresSchema((text, values) => reader.query(text, values), postgresMigrations);
    await reader.end();
    writeFileSync(`${FIXTURES}/parley-postgres-v5.sql`, dump);
    writeFileSync(`${FIXTURES}/parley-postgres-v5.expected.json`, `${JSON.stringify(expected, null, 2)}\n`);
  } finally {
    await admin.query(`DROP SCHEMA ${schema} CASCADE`);
    await admin.end();
  }
}
