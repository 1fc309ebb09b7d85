import { InvalidRequestError } from "../../core/index.js";
import { DEFAULT_OWNER } from "../owner.js";
import type { TraceQuery } from "./trace-store.js";

/**
 * A page position: the last listed trace's instant and its insertion order. Opaque to callers (base64url), so
 * a backend may change what it holds.
 */
export interface TraceCursor {
  instant: string;
  order: number;
}

export function encodeCursor(cursor: TraceCursor): string {
  return Buffer.from(`${cursor.instant}|${cursor.order}`, "utf8").toString("base64url");
}

export function decodeCursor(text: string): TraceCursor {
  const [instant, order] = Buffer.from(text, "base64url").toString("utf8").split("|");
  const number = Number(order);
  if (instant === undefined || Number.isNaN(Date.parse(instant)) || !Number.isSafeInteger(number)) {
    throw new InvalidRequestError("not a trace list cursor", "cursor");
  }
  return { instant, order: number };
}

export function statusRange(status: TraceQuery["status"]): { from: number; to: number } | undefined {
  if (status === undefined) return undefined;
  return typeof status === "number" ? { from: status, to: status } : status;
}

/**
 * The filters as a SQL condition over the `traces` columns (SQLite and PostgreSQL read it alike), with
 * `placeholder` giving each value's parameter marker in turn.
 */
export function traceFilterSql(query: TraceQuery, placeholder: (value: unknown, cast?: string) => string): string {
  const conditions: string[] = [];
  if (query.cursor !== undefined) {
    const cursor = decodeCursor(query.cursor);
    conditions.push(
      `(created_at, seq) < (${placeholder(cursor.instant, "timestamptz")}, ${placeholder(cursor.order)})`,
    );
  }
  const status = statusRange(query.status);
  if (status !== undefined) {
    // PostgreSQL reads one status in its index's order but sorts a range; SQLite (no status index since step 6)
    // walks the newest-first index and filters.
    conditions.push(
      status.from === status.to
        ? `status = ${placeholder(status.from)}`
        : `status BETWEEN ${placeholder(status.from)} AND ${placeholder(status.to)}`,
    );
  }
  if (query.model !== undefined) {
    conditions.push(`(client_model = ${placeholder(query.model)} OR upstream_model = ${placeholder(query.model)})`);
  }
  if (query.conversationId !== undefined) conditions.push(`conversation_id = ${placeholder(query.conversationId)}`);
  if (query.tenant !== undefined) {
    // SQLite's tenant index leaves the default tenant out: it reads the index only when the query names its
    // condition word for word.
    conditions.push(
      query.tenant === DEFAULT_OWNER
        ? `tenant = ${placeholder(query.tenant)}`
        : `tenant = ${placeholder(query.tenant)} AND tenant <> '${DEFAULT_OWNER}'`,
    );
  }
  if (query.hasLosses !== undefined) conditions.push(query.hasLosses ? "lossy_count > 0" : "lossy_count = 0");
  return conditions.length === 0 ? "" : `WHERE ${conditions.join(" AND ")}`;
}
