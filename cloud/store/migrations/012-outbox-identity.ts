import { type CreateTableBuilder, type Kysely, type Migration, sql } from "kysely";

/** A table keyed by one outbox message, and what it is rebuilt with. */
type Rebuilt = {
  table: string;
  /** Its columns after gateway_id and outbox_id, as in the migration that made it. */
  columns: (t: CreateTableBuilder<string, string>) => CreateTableBuilder<string, string>;
  names: string[];
  /** Indexes to make again: name → columns. */
  indexes: Record<string, string[]>;
};

const notNull = { notNull: true } as const;
type Col = [name: string, type: "text" | "integer", o?: typeof notNull];
const cols = (list: Col[]) => ({
  columns: (t: CreateTableBuilder<string, string>) =>
    list.reduce((b, [name, type, o]) => b.addColumn(name, type, (c) => (o ? c.notNull() : c)), t),
  names: list.map(([name]) => name),
});

const TABLES: Rebuilt[] = [
  {
    table: "applied_seqs",
    ...cols([
      ["seq", "integer", notNull],
      ["applied_at", "text", notNull],
    ]),
    indexes: {},
  },
  {
    table: "hardware_events",
    ...cols([
      ["seq", "integer", notNull],
      ["device_id", "text"],
      ["source", "text", notNull],
      ["event", "text", notNull],
      ["detail", "text", notNull],
      ["observed_at", "text", notNull],
      ["received_at", "text", notNull],
    ]),
    indexes: { hardware_events_device: ["device_id"] },
  },
  {
    table: "device_state_changes",
    ...cols([
      ["seq", "integer", notNull],
      ["device_id", "text", notNull],
      ["from_value", "text", notNull],
      ["to_value", "text", notNull],
      ["lock_state", "text", notNull],
      ["cause", "text", notNull],
      ["detail", "text", notNull],
      ["observed_at", "text", notNull],
      ["received_at", "text", notNull],
    ]),
    indexes: { device_state_changes_device: ["device_id"] },
  },
  {
    table: "access_events",
    ...cols([
      ["seq", "integer", notNull],
      ["operator_id", "text", notNull],
      ["location_id", "text", notNull],
      ["device_id", "text"],
      ["reader", "text", notNull],
      ["card_id", "text", notNull],
      ["granted", "integer", notNull],
      ["action", "text", notNull],
      ["reason", "text", notNull],
      ["whitelist_id", "text"],
      ["decided_by", "text", notNull],
      ["actuated", "integer"],
      ["observed_at", "text", notNull],
      ["received_at", "text", notNull],
    ]),
    indexes: { access_events_device: ["device_id", "observed_at"] },
  },
];

/**
 * Outbox identities (docs/decisions/wire.md): a gateway whose store was lost numbers its
 * messages from 1 again under a new identity, so every table keyed by one outbox message is keyed by
 * (gateway_id, outbox_id, seq); rows from before get '' (messages without an identity dedup as that). Neither
 * store changes a primary key in place (SQLite cannot), so each table is made again under a new name, filled,
 * and swapped in. `gateway_outboxes` holds what each outbox last said it will never send again (heartbeats),
 * which is what lets `applied_seqs` be pruned.
 */
export const outboxIdentityMigration: Migration = {
  async up(db: Kysely<unknown>) {
    // PostgreSQL runs each migration in a transaction; SQLite's runs without one, so the swaps get their own.
    if (db.isTransaction) await migrate(db);
    else await db.transaction().execute(migrate);
  },
};

async function migrate(db: Kysely<unknown>) {
  for (const t of TABLES) {
    const next = `${t.table}_012`;
    await t
      .columns(
        db.schema
          .createTable(next)
          .addColumn("gateway_id", "text", (c) => c.notNull())
          .addColumn("outbox_id", "text", (c) => c.notNull().defaultTo("")),
      )
      .addPrimaryKeyConstraint(`${t.table}_outbox_pk`, ["gateway_id", "outbox_id", "seq"])
      .execute();
    const names = sql.join(t.names.map((n) => sql.ref(n)));
    await sql`INSERT INTO ${sql.table(next)} (gateway_id, outbox_id, ${names})
              SELECT gateway_id, '', ${names} FROM ${sql.table(t.table)}`.execute(db);
    await db.schema.dropTable(t.table).execute();
    await db.schema.alterTable(next).renameTo(t.table).execute();
    for (const [name, columns] of Object.entries(t.indexes))
      await db.schema.createIndex(name).on(t.table).columns(columns).execute();
  }
  await db.schema
    .createTable("gateway_outboxes")
    .addColumn("gateway_id", "text", (c) => c.notNull())
    .addColumn("outbox_id", "text", (c) => c.notNull())
    // The outbox's latest word (every seq below it confirmed and deleted), and when it first said so.
    .addColumn("unconfirmed_from", "integer", (c) => c.notNull())
    .addColumn("reported_at", "text", (c) => c.notNull())
    // An earlier word, kept until it is old enough that no copy sent before it can still be on its way.
    .addColumn("checkpoint_from", "integer", (c) => c.notNull())
    .addColumn("checkpoint_at", "text", (c) => c.notNull())
    .addPrimaryKeyConstraint("gateway_outboxes_pk", ["gateway_id", "outbox_id"])
    .execute();
}
