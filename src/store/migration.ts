/**
 * One numbered step of a backend's schema. A step is never edited once released; a change is a new step.
 * `schema_migrations` records which steps a database has, and opening a store applies the missing ones.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}
