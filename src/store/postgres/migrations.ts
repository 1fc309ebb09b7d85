import type { Migration } from "../migration.js";
import { traceSchemaStep } from "./trace-schema.js";

/**
 * The PostgreSQL schema, one numbered step at a time (never edit a released step). Parts and envelopes are
 * `text`, not `jsonb`: jsonb reorders keys and drops duplicates, and the store promises the bytes back.
 */
export const postgresMigrations: readonly Migration[] = [
  {
    version: 1,
    name: "conversations, messages, parts, traces",
    sql: `
      CREATE TABLE conversations (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL,
        metadata text NOT NULL,
        next_seq integer NOT NULL DEFAULT 1
      );
      CREATE TABLE messages (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        conversation_id text NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
        seq integer NOT NULL,
        role text NOT NULL,
        complete boolean NOT NULL,
        created_at timestamptz NOT NULL,
        extra text NOT NULL,
        UNIQUE (conversation_id, seq)
      );
      CREATE TABLE parts (
        message_id bigint NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
        position integer NOT NULL,
        part text NOT NULL,
        PRIMARY KEY (message_id, position)
      );
      CREATE TABLE traces (
        seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        id text NOT NULL UNIQUE,
        request_id text NOT NULL,
        created_at timestamptz NOT NULL,
        route text NOT NULL,
        provider text,
        model text,
        status integer,
        record text NOT NULL
      );
      CREATE INDEX traces_created_at ON traces (created_at, seq);
    `,
  },
  {
    version: 2,
    name: "messages keep the client's own JSON beside their parts",
    sql: `
      ALTER TABLE messages ADD COLUMN source_format text;
      ALTER TABLE messages ADD COLUMN source text;
    `,
  },
  {
    version: 3,
    name: "conversation owners",
    sql: `ALTER TABLE conversations ADD COLUMN owner text NOT NULL DEFAULT 'default';`,
  },
  traceSchemaStep(4),
  {
    version: 5,
    name: "answers kept for later turns",
    sql: `
      CREATE TABLE answers (
        id text PRIMARY KEY,
        owner text NOT NULL,
        created_at timestamptz NOT NULL,
        previous_id text,
        messages text NOT NULL,
        body text NOT NULL
      );
    `,
  },
];
