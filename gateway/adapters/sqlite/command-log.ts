import type { Statement } from "better-sqlite3";
import type { CommandEnd, CommandLog, CommandLogEntry, CommandState, LoggedCommand } from "../../ports.ts";
import type { GatewayDb } from "./open-db.ts";

/**
 * The CommandLog port in SQLite: which command ids this gateway has taken (flow 1: the command id is the
 * idempotency key). An id seen before is never executed again; its outcome is reported again instead.
 */
export class SqliteCommandLog implements CommandLog {
  private readonly find: Statement<[string]>;
  private readonly begin: Statement<[string, string, string, string, string]>;
  private readonly end: Statement<[string, string, string | null, string, string]>;
  private readonly latest: Statement<[string]>;
  private readonly open: Statement<[]>;

  constructor(db: GatewayDb) {
    this.find = db.prepare("SELECT * FROM command_log WHERE command_id = ?");
    this.begin = db.prepare(
      "INSERT INTO command_log (command_id, device_id, name, state, received_at) VALUES (?, ?, ?, ?, ?)",
    );
    this.end = db.prepare(
      "UPDATE command_log SET state = ?, reason = ?, lock_state = ?, finished_at = ? WHERE command_id = ?",
    );
    this.latest = db.prepare(
      "SELECT * FROM command_log WHERE device_id = ? ORDER BY received_at DESC LIMIT 1",
    );
    this.open = db.prepare("SELECT command_id, device_id, name FROM command_log WHERE state = 'RECEIVED'");
  }

  get(commandId: string): CommandLogEntry | undefined {
    return this.find.get(commandId) as CommandLogEntry | undefined;
  }

  /** Records that the command was taken (state RECEIVED) or refused outright (state ERROR). */
  record(e: LoggedCommand & { state: CommandState; at: string }) {
    this.begin.run(e.command_id, e.device_id, e.name, e.state, e.at);
  }

  finish(...[commandId, state, reason, lockState, at]: CommandEnd) {
    this.end.run(state, reason, lockState, at, commandId);
  }

  lastFor(deviceId: string): CommandLogEntry | undefined {
    return this.latest.get(deviceId) as CommandLogEntry | undefined;
  }

  unfinished(): LoggedCommand[] {
    return this.open.all() as LoggedCommand[];
  }
}
