import type { Kysely, Migration } from "kysely";

/**
 * A rider's token generation (cloud/users/rider-token-revocation.ts): every access token carries the
 * generation it was issued under, and revoking a rider's tokens moves the generation on, so access tokens
 * issued before are refused at once instead of running out within the hour. Existing riders start at 0,
 * which tokens issued before this column existed carry too (no claim reads as 0).
 */
export const riderTokenGenerationMigration: Migration = {
  async up(db: Kysely<unknown>) {
    await db.schema
      .alterTable("external_users")
      .addColumn("token_generation", "integer", (c) => c.notNull().defaultTo(0))
      .execute();
  },
};
