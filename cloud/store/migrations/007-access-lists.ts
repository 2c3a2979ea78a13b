import type { Kysely, Migration } from "kysely";

/** Access lists, their members and phone invites. */
export const accessListsMigration: Migration = {
  async up(_db: Kysely<unknown>) {},
};
