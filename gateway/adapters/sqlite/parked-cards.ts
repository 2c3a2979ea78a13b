import type { Statement } from "better-sqlite3";
import type { ParkedCardStore } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The ParkedCardStore port in SQLite: which card locked each locker or dock under rfid_parking, so that
 * card, and no other, retrieves it with a tap, also after a restart.
 */
export class SqliteParkedCards implements ParkedCardStore {
  private readonly find: Statement<[string]>;
  private readonly upsert: Statement<[string, string, string]>;
  private readonly remove: Statement<[string]>;

  constructor(db: GatewayDb) {
    this.find = db.prepare("SELECT card_id FROM parked_cards WHERE device_id = ?");
    this.upsert = db.prepare(
      `INSERT INTO parked_cards (device_id, card_id, parked_at) VALUES (?, ?, ?)
       ON CONFLICT (device_id) DO UPDATE SET card_id = excluded.card_id, parked_at = excluded.parked_at`,
    );
    this.remove = db.prepare("DELETE FROM parked_cards WHERE device_id = ?");
  }

  get(deviceId: string): string | null {
    return (this.find.get(deviceId) as { card_id: string } | undefined)?.card_id ?? null;
  }

  put(deviceId: string, card: string, at: string): void {
    this.upsert.run(deviceId, card, at);
  }

  clear(deviceId: string): boolean {
    return this.remove.run(deviceId).changes > 0;
  }
}
