import type { Statement } from "better-sqlite3";
import type { Booking, BookingStore } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The BookingStore port in SQLite: the booking the cloud made for each device (holder and end), kept so
 * local access can honour it while the cloud is away. Ends are stored as UTC RFC 3339 with milliseconds,
 * so they compare as text against the gateway's clock.
 */
export class SqliteBookings implements BookingStore {
  private readonly upsert: Statement<[string, string, string, string, string]>;
  private readonly remove: Statement<[string]>;
  private readonly find: Statement<[string, string]>;
  private readonly running: Statement<[string]>;
  private readonly ended: Statement<[string]>;
  private readonly removeEnded: Statement<[string]>;
  private readonly first: Statement<[]>;

  constructor(private readonly db: GatewayDb) {
    this.upsert = db.prepare(
      `INSERT INTO bookings (device_id, holder, until, command_id, booked_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (device_id) DO UPDATE SET holder = excluded.holder, until = excluded.until,
         command_id = excluded.command_id, booked_at = excluded.booked_at`,
    );
    this.remove = db.prepare("DELETE FROM bookings WHERE device_id = ?");
    this.find = db.prepare("SELECT * FROM bookings WHERE device_id = ? AND until > ?");
    this.running = db.prepare("SELECT * FROM bookings WHERE until > ? ORDER BY until, device_id");
    this.ended = db.prepare("SELECT * FROM bookings WHERE until <= ? ORDER BY until, device_id");
    this.removeEnded = db.prepare("DELETE FROM bookings WHERE until <= ?");
    this.first = db.prepare("SELECT min(until) AS until FROM bookings");
  }

  put(b: Booking): void {
    const until = new Date(b.until).toISOString();
    this.upsert.run(b.device_id, b.holder, until, b.command_id, b.booked_at);
  }

  clear(deviceId: string): boolean {
    return this.remove.run(deviceId).changes > 0;
  }

  active(deviceId: string, now: Date): Booking | undefined {
    return this.find.get(deviceId, now.toISOString()) as Booking | undefined;
  }

  all(now: Date): Booking[] {
    return this.running.all(now.toISOString()) as Booking[];
  }

  clearExpired(now: Date): Booking[] {
    const ts = now.toISOString();
    return this.db.transaction(() => {
      const gone = this.ended.all(ts) as Booking[];
      this.removeEnded.run(ts);
      return gone;
    })();
  }

  nextEnd(): string | null {
    return (this.first.get() as { until: string | null }).until;
  }
}
