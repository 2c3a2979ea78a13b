import type { Statement } from "better-sqlite3";
import type { LocalAction, LocalActionLog } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/** The LocalActionLog port in SQLite: what technicians did through parkctl, with who and why. */
export class SqliteLocalActions implements LocalActionLog {
  private readonly insert: Statement<[string, string, string, string, string, string]>;
  private readonly update: Statement<[string, number]>;

  constructor(db: GatewayDb) {
    this.insert = db.prepare(
      "INSERT INTO local_actions (at, who, why, device_alias, action, result) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.update = db.prepare("UPDATE local_actions SET result = ? WHERE id = ?");
  }

  record(a: LocalAction): number {
    return Number(this.insert.run(a.at, a.who, a.why, a.device_alias, a.action, a.result).lastInsertRowid);
  }

  settle(id: number, result: string): void {
    this.update.run(result, id);
  }
}
