import pg from "pg";
import { expect, inject, test } from "vitest";

test("the test PostgreSQL server answers", async () => {
  const client = new pg.Client({ connectionString: inject("postgresUrl") });
  await client.connect();
  const result = await client.query("select 1 + 1 as two");
  await client.end();
  expect(result.rows[0].two).toBe(2);
});
