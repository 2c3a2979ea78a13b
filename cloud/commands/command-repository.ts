import type { CommandEvent } from "../../shared/api/command.ts";
import type { CommandState } from "../../shared/domain/command-machine.ts";
import type { CommandRequest as WireCommand } from "../../shared/wire/messages.ts";
import type { CommandRecord } from "../store/command-record.ts";
import type { Executor } from "../store/db.ts";
import { fromJson, toJson } from "../store/json-column.ts";
import type { CommandsTable } from "../store/schema.ts";

const MAX_APPEND_ATTEMPTS = 5;

function toRecord(row: CommandsTable): CommandRecord {
  const { state_value, state_reason, state_timeout_at, params, events, wire_request, ...rest } = row;
  return {
    ...rest,
    state: { value: state_value, reason: state_reason, timeout_at: state_timeout_at },
    params: fromJson(params),
    events: fromJson(events),
    wire_request: wire_request === null ? null : fromJson(wire_request),
  };
}

export function commandRepository(db: Executor) {
  const byId = (id: string) => db.selectFrom("commands").selectAll().where("id", "=", id);

  return {
    async find(id: string): Promise<CommandRecord | undefined> {
      const row = await byId(id).executeTakeFirst();
      return row && toRecord(row);
    },

    /** Another operator's command is exactly as missing as one that does not exist (BOLA). */
    async findForOperator(operatorId: string, id: string): Promise<CommandRecord | undefined> {
      const row = await byId(id).where("operator_id", "=", operatorId).executeTakeFirst();
      return row && toRecord(row);
    },

    /**
     * Holds the command's row until the transaction ends, so concurrent writers about it take turns: a
     * write of nothing that PostgreSQL locks the row for (SQLite writes one transaction at a time anyway).
     */
    async hold(id: string): Promise<void> {
      await db
        .updateTable("commands")
        .set((eb) => ({ updated_at: eb.ref("updated_at") }))
        .where("id", "=", id)
        .execute();
    },

    /** The command and the gateway that drives its device (null when the device has none). */
    async findWithGateway(
      id: string,
    ): Promise<{ command: CommandRecord; gatewayId: string | null } | undefined> {
      const row = await db
        .selectFrom("commands")
        .innerJoin("devices", "devices.id", "commands.device_id")
        .selectAll("commands")
        .select("devices.gateway_id")
        .where("commands.id", "=", id)
        .executeTakeFirst();
      if (!row) return undefined;
      const { gateway_id, ...command } = row;
      return { command: toRecord(command), gatewayId: gateway_id };
    },

    async insert(c: CommandRecord): Promise<void> {
      const { state, params, events, wire_request, ...same } = c;
      await db
        .insertInto("commands")
        .values({
          ...same,
          state_value: state.value,
          state_reason: state.reason,
          state_timeout_at: state.timeout_at,
          params: toJson(params),
          events: toJson(events),
          wire_request: wire_request === null ? null : toJson(wire_request),
        })
        .execute();
    },

    /**
     * Moves the command to `next` and appends `added` to its events, only if its state and `updated_at`
     * are still those of `current`, so two replicas (or a late report racing the deadline sweep) never
     * both apply a transition. Returns the command as written, or null when another writer came first.
     */
    async compareAndSet(
      current: CommandRecord,
      next: CommandState,
      added: CommandEvent[],
      now: Date,
    ): Promise<CommandRecord | null> {
      const events = [...current.events, ...added];
      const updated_at = now.toISOString();
      const res = await db
        .updateTable("commands")
        .set({
          state_value: next.value,
          state_reason: next.reason,
          state_timeout_at: next.timeout_at,
          events: toJson(events),
          updated_at,
        })
        .where("id", "=", current.id)
        .where("state_value", "=", current.state.value)
        .where("updated_at", "=", current.updated_at)
        .executeTakeFirst();
      return res.numUpdatedRows > 0n ? { ...current, state: next, events, updated_at } : null;
    },

    /**
     * Adds an event without moving the command's state: what the hardware reported about a command the
     * cloud had already ended is still part of its history. At the end, or at the index `at` gives.
     */
    async appendEvent(
      id: string,
      event: CommandEvent,
      now: Date,
      at?: (events: CommandEvent[]) => number,
    ): Promise<void> {
      for (let attempt = 0; attempt < MAX_APPEND_ATTEMPTS; attempt++) {
        const row = await db.selectFrom("commands").select("events").where("id", "=", id).executeTakeFirst();
        if (!row) return;
        const events = fromJson(row.events);
        events.splice(at ? at(events) : events.length, 0, event);
        const res = await db
          .updateTable("commands")
          .set({ events: toJson(events), updated_at: now.toISOString() })
          .where("id", "=", id)
          // The events themselves are the compare-and-set: two appends in one millisecond cannot both win.
          .where("events", "=", row.events)
          .executeTakeFirst();
        if (res.numUpdatedRows > 0n) return;
      }
      throw new Error(`command ${id}: too much contention`);
    },

    /**
     * What a gateway has not taken yet and may still take (NOT_SENT or SENT, delivery deadline ahead),
     * in the order the commands were made.
     */
    async awaitingDelivery(gatewayId: string, now: Date): Promise<WireCommand[]> {
      const rows = await db
        .selectFrom("commands")
        .innerJoin("devices", "devices.id", "commands.device_id")
        .select("commands.wire_request")
        .where("devices.gateway_id", "=", gatewayId)
        .where("commands.state_value", "in", ["NOT_SENT", "SENT"])
        .where("commands.state_timeout_at", ">", now.toISOString())
        .where("commands.wire_request", "is not", null)
        .orderBy("commands.created_at")
        .orderBy("commands.id")
        .execute();
      return rows.flatMap((r) => (r.wire_request === null ? [] : [fromJson(r.wire_request)]));
    },

    /** The operator's commands, in the order they were made. */
    async ofOperator(operatorId: string): Promise<CommandRecord[]> {
      const rows = await db
        .selectFrom("commands")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .orderBy("created_at")
        .orderBy("id")
        .execute();
      return rows.map(toRecord);
    },

    /** Commands still under way whose state's deadline has passed. */
    pastDeadline(at: string, limit: number): Promise<Pick<CommandRecord, "id" | "device_id">[]> {
      return db
        .selectFrom("commands")
        .select(["id", "device_id"])
        .where("state_value", "in", ["NOT_SENT", "SENT", "RECEIVED"])
        .where("state_timeout_at", "<=", at)
        .limit(limit)
        .execute();
    },
  };
}

export type CommandRepository = ReturnType<typeof commandRepository>;
