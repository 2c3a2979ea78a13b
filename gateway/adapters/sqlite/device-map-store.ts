import { DeviceMap } from "../../../shared/wire/messages.ts";
import type { DeviceMapStore } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The DeviceMapStore port in SQLite: the last device map the cloud sent, kept so the gateway drives its
 * hardware while the cloud is away.
 */
export class SqliteDeviceMapStore implements DeviceMapStore {
  constructor(private readonly db: GatewayDb) {}

  load(): DeviceMap | null {
    const row = this.db.prepare("SELECT body FROM device_map WHERE id = 1").get() as
      | { body: string }
      | undefined;
    if (!row) return null;
    let body: unknown;
    try {
      body = JSON.parse(row.body);
    } catch {
      return null; // a corrupt row must not stop the gateway from starting; the cloud resends the map
    }
    const parsed = DeviceMap.safeParse(body);
    return parsed.success ? parsed.data : null;
  }

  save(map: DeviceMap): void {
    this.db
      .prepare(
        "INSERT INTO device_map (id, version, body) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET version = excluded.version, body = excluded.body",
      )
      .run(map.version, JSON.stringify(map));
  }
}
