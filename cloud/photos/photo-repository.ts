import type { Executor } from "../store/db.ts";
import type { PhotoPartsTable, PhotosTable } from "../store/tables/photo-tables.ts";

export type PhotoRecord = PhotosTable;
export type PhotoPartRecord = PhotoPartsTable;

/** Photos named per statement: well inside both stores' bound-parameter limits. */
const CHUNK = 500;

/** Take-photo photos and the parts of those still arriving: only this repository reads or writes them. */
export function photoRepository(db: Executor) {
  return {
    find(commandId: string): Promise<PhotoRecord | undefined> {
      return db.selectFrom("photos").selectAll().where("command_id", "=", commandId).executeTakeFirst();
    },

    /** Whether the command's photo is whole (assembled, pruned or not). */
    async isAssembled(commandId: string): Promise<boolean> {
      const row = await db
        .selectFrom("photos")
        .select("command_id")
        .where("command_id", "=", commandId)
        .executeTakeFirst();
      return row !== undefined;
    },

    /** The operator's photo of the command: another operator's is as missing as none. */
    findForOperator(
      operatorId: string,
      commandId: string,
    ): Promise<Pick<PhotoRecord, "mime" | "bytes" | "pruned_at"> | undefined> {
      return db
        .selectFrom("photos")
        .select(["mime", "bytes", "pruned_at"])
        .where("command_id", "=", commandId)
        .where("operator_id", "=", operatorId)
        .executeTakeFirst();
    },

    /** What is known of the parts kept for the command (their data aside), in no particular order. */
    partsOf(commandId: string): Promise<Pick<PhotoPartRecord, "part" | "parts" | "mime">[]> {
      return db
        .selectFrom("photo_parts")
        .select(["part", "parts", "mime"])
        .where("command_id", "=", commandId)
        .execute();
    },

    async addPart(p: PhotoPartRecord): Promise<void> {
      await db.insertInto("photo_parts").values(p).execute();
    },

    /** The data of the command's parts, in part order. */
    async partData(commandId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("photo_parts")
        .select("data")
        .where("command_id", "=", commandId)
        .orderBy("part")
        .execute();
      return rows.map((r) => r.data);
    },

    async dropParts(commandId: string): Promise<void> {
      await db.deleteFrom("photo_parts").where("command_id", "=", commandId).execute();
    },

    /** Deletes parts received at or before `cutoff`; returns how many. */
    async dropPartsReceivedBy(cutoff: string): Promise<number> {
      const res = await db.deleteFrom("photo_parts").where("received_at", "<=", cutoff).executeTakeFirst();
      return Number(res.numDeletedRows);
    },

    async insert(photo: PhotoRecord): Promise<void> {
      await db.insertInto("photos").values(photo).execute();
    },

    /** The device's photos still kept, newest arrival first. */
    async keptOf(deviceId: string): Promise<string[]> {
      const rows = await db
        .selectFrom("photos")
        .select("command_id")
        .where("device_id", "=", deviceId)
        .where("pruned_at", "is", null)
        .orderBy("received_at", "desc")
        .orderBy("command_id", "desc")
        .execute();
      return rows.map((r) => r.command_id);
    },

    /** Photos still kept that arrived at or before `cutoff`. */
    async keptReceivedBy(cutoff: string): Promise<string[]> {
      const rows = await db
        .selectFrom("photos")
        .select("command_id")
        .where("pruned_at", "is", null)
        .where("received_at", "<=", cutoff)
        .execute();
      return rows.map((r) => r.command_id);
    },

    /** Devices keeping more than `limit` photos. */
    async devicesKeepingMoreThan(limit: number): Promise<string[]> {
      const rows = await db
        .selectFrom("photos")
        .select("device_id")
        .where("pruned_at", "is", null)
        .groupBy("device_id")
        .having((eb) => eb.fn.countAll(), ">", limit)
        .execute();
      return rows.map((r) => r.device_id);
    },

    /**
     * Deletes the bytes of these photos, keeping each row as the record that it was taken and when it
     * went. Returns how many were still kept.
     */
    async prune(commandIds: readonly string[], at: string): Promise<number> {
      let pruned = 0;
      for (let i = 0; i < commandIds.length; i += CHUNK) {
        const res = await db
          .updateTable("photos")
          .set({ bytes: "", pruned_at: at })
          .where("command_id", "in", commandIds.slice(i, i + CHUNK))
          .where("pruned_at", "is", null)
          .executeTakeFirst();
        pruned += Number(res.numUpdatedRows);
      }
      return pruned;
    },
  };
}

export type PhotoRepository = ReturnType<typeof photoRepository>;
