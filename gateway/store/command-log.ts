import type { Statement } from "better-sqlite3";
import type { GatewayDb } from "./open-db.ts";

export type CommandLogEntry = {
  command_id: string;
  device_id: string;
  name: string;
  state: "RECEIVED" | "SUCCESS" | "ERROR";
  reason: string;
  lock_state: "LOCKED" | "UNLOCKED" | null;
  received_at: string;
  finished_at: string | null;
};

/**
 * Which command ids this gateway has taken (flow 1: the command id is the idempotency key). An id seen
 * before is never executed again; its outcome is reported again instead.
 */
export class CommandLog {
  private readonly find: Statement<[string]>;
  private readonly begin: Statement<[string, string, string, string, string]>;
  private readonly end: Statement<[string, string, string | null, string, string]>;
  private readonly latest: Statement<[string]>;

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
  }

  get(commandId: string): CommandLogEntry | undefined {
    return this.find.get(commandId) as CommandLogEntry | undefined;
  }

  /** Records that the command was taken (state RECEIVED) or refused outright (state ERROR). */
  record(e: {
    command_id: string;
    device_id: string;
    name: string;
    state: CommandLogEntry["state"];
    at: string;
  }) {
    this.begin.run(e.command_id, e.device_id, e.name, e.state, e.at);
  }

  finish(
    commandId: string,
    state: "SUCCESS" | "ERROR",
    reason: string,
    lockState: string | null,
    at: string,
  ) {
    this.end.run(state, reason, lockState, at, commandId);
  }

  lastFor(deviceId: string): CommandLogEntry | undefined {
    return this.latest.get(deviceId) as CommandLogEntry | undefined;
  }
}
