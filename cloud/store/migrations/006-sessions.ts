import type { Kysely, Migration } from "kysely";

/** Sessions, their immutable events, payments and price lists. */
export const sessionsMigration: Migration = {
  async up(_db: Kysely<unknown>) {},
};
