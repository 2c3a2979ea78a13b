import type { Executor } from "../store/db.ts";
import { fromJson } from "../store/json-column.ts";
import type { SessionsTable } from "../store/tables/session-tables.ts";

/** What the console's device page reads of one device that no other repository lists by device. */
export function deviceTimelineRepository(db: Executor) {
  return {
    /** The operator owning a device, for a superadmin who names a device of any operator. */
    async operatorOfDevice(deviceId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("devices")
        .select("operator_id")
        .where("id", "=", deviceId)
        .executeTakeFirst();
      return row?.operator_id;
    },

    /** The operator owning a command, for a superadmin who follows a command of any operator. */
    async operatorOfCommand(commandId: string): Promise<string | undefined> {
      const row = await db
        .selectFrom("commands")
        .select("operator_id")
        .where("id", "=", commandId)
        .executeTakeFirst();
      return row?.operator_id;
    },

    /** The device's latest commands, newest first. */
    async commandsOf(operatorId: string, deviceId: string, limit: number) {
      const rows = await db
        .selectFrom("commands")
        .select([
          "id",
          "name",
          "state_value",
          "state_reason",
          "params",
          "requested_by",
          "events",
          "created_at",
        ])
        .where("operator_id", "=", operatorId)
        .where("device_id", "=", deviceId)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
      return rows.map(({ params, events, ...rest }) => ({
        ...rest,
        params: fromJson(params),
        events: fromJson(events),
      }));
    },

    /** The device's latest sessions, newest first. */
    sessionsOf(operatorId: string, deviceId: string, limit: number): Promise<SessionsTable[]> {
      return db
        .selectFrom("sessions")
        .selectAll()
        .where("operator_id", "=", operatorId)
        .where("device_id", "=", deviceId)
        .orderBy("created_at", "desc")
        .orderBy("id", "desc")
        .limit(limit)
        .execute();
    },
  };
}
