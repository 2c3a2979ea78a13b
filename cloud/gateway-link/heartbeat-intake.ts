import { sql } from "kysely";
import type { Heartbeat } from "../../shared/wire/messages.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { type Db, isPostgres } from "../store/db.ts";
import { recordOutboxPosition } from "./outbox-positions.ts";

type Beat = { hb: Heartbeat; at: string };
type Batch = { beats: Beat[]; done: Promise<void>; resolve: () => void; reject: (err: unknown) => void };

export type HeartbeatIntake = {
  /** Applies a heartbeat received at `now`, with those of other gateways that came meanwhile; resolves once committed. */
  apply(hb: Heartbeat, now: Date): Promise<void>;
};

/**
 * A heartbeat marks its gateway's GUARD and every bus device it reached as seen at its arrival: the
 * cloud's clock, not the gateway's, decides health, so a gateway with a wrong clock cannot look healthy
 * (F14). It writes the gateway's `heartbeat_at` and, only where reachability changed, devices
 * (migration 016). Where its outbox stands is kept for pruning `applied_seqs`.
 *
 * Heartbeats are applied as a group commit: while one batch is being written, those that arrive wait and go
 * together in the next, so a quiet cloud writes each at once and a busy one writes a batch per round trip
 * instead of a statement and a commit per heartbeat (issue 10, fleet). On PostgreSQL a batch is one
 * statement whatever its size; the cloud runs it on a connection of its own that commits without waiting
 * for the WAL flush: a heartbeat lost to a database crash is replaced by the next one 10 s later
 * (docs/decisions/fleet-intake.md). Callers keep each gateway's messages in order by awaiting `apply`
 * before their next one.
 */
export function createHeartbeatIntake(db: Db): HeartbeatIntake {
  const postgres = isPostgres(db);
  /** Where each gateway's outbox last stood as this process wrote it: an unchanged position is not written again. */
  const positions = new Map<string, string>();
  let next: Batch | null = null;
  let writing = false;

  function newBatch(): Batch {
    let resolve!: () => void;
    let reject!: (err: unknown) => void;
    const done = new Promise<void>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    return { beats: [], done, resolve, reject };
  }

  async function writeAll(): Promise<void> {
    // Every heartbeat handed in within this turn of the event loop joins the first batch.
    await new Promise<void>((r) => setImmediate(r));
    while (next) {
      const batch = next;
      next = null;
      try {
        await write(batch.beats);
        batch.resolve();
      } catch (err) {
        batch.reject(err);
      }
    }
    writing = false;
  }

  async function write(all: Beat[]): Promise<void> {
    // A gateway's latest heartbeat says all its earlier ones do.
    const beats = [...new Map(all.map((b) => [b.hb.gateway_id, b])).values()];
    const moved = beats.filter(({ hb }) => hb.outbox && positions.get(hb.gateway_id) !== positionKey(hb));
    if (!postgres) {
      // SQLite is in-process: its statements cost microseconds; what a batch saves is the commits.
      await db.transaction().execute(async (trx) => {
        const devices = deviceRepository(trx);
        for (const { hb, at } of beats) {
          await devices.markReachable(hb.gateway_id, reachableIds(hb));
          await trx
            .updateTable("gateways")
            .set({ heartbeat_at: at })
            .where("id", "=", hb.gateway_id)
            .execute();
        }
        for (const { hb, at } of moved)
          if (hb.outbox) await recordOutboxPosition(trx, hb.gateway_id, hb.outbox, new Date(at));
      });
    } else {
      const seen = JSON.stringify(
        beats.map(({ hb, at }) => ({ gateway_id: hb.gateway_id, at, reachable: reachableIds(hb) })),
      );
      const outboxes = JSON.stringify(
        moved.map(({ hb, at }) => ({
          gateway_id: hb.gateway_id,
          outbox_id: hb.outbox?.id,
          unconfirmed_from: hb.outbox?.unconfirmed_from,
          at,
        })),
      );
      // One statement, so one round trip and its own transaction. As markReachable for every gateway at
      // once (reads each gateway's devices, writes the few that changed: every part of the statement reads
      // the gateways as they were before it), then each gateway's heartbeat_at: the cloud's now, even when
      // its clock was stepped back (a guard against going back would leave every gateway unseen until it
      // caught up). The outbox positions as recordOutboxPosition: only a higher one is written, a new
      // outbox starts its checkpoint. The LIMIT tells the planner how many rows the JSON holds (it assumes
      // 100), so a small batch looks its gateways up by key instead of scanning them.
      await sql`
        WITH v AS MATERIALIZED (
          SELECT * FROM json_to_recordset(${seen}::json) AS x(gateway_id text, at text, reachable text[])
          LIMIT ${beats.length}
        ),
        reach AS (
          UPDATE devices AS d
          SET reachable = 1 - d.reachable,
              seen_at = CASE WHEN d.reachable = 1 AND g.heartbeat_at > coalesce(d.seen_at, '')
                        THEN g.heartbeat_at ELSE d.seen_at END
          FROM v, gateways AS g
          WHERE g.id = v.gateway_id AND d.gateway_id = v.gateway_id AND d.type <> 'GUARD'
            AND d.reachable <> CASE WHEN d.id = ANY (v.reachable) THEN 1 ELSE 0 END
          RETURNING 1
        ),
        positions AS (
          INSERT INTO gateway_outboxes
            (gateway_id, outbox_id, unconfirmed_from, reported_at, checkpoint_from, checkpoint_at)
          SELECT o.gateway_id, o.outbox_id, o.unconfirmed_from, o.at, o.unconfirmed_from, o.at
          FROM json_to_recordset(${outboxes}::json)
            AS o(gateway_id text, outbox_id text, unconfirmed_from integer, at text)
          ON CONFLICT (gateway_id, outbox_id) DO UPDATE
            SET unconfirmed_from = excluded.unconfirmed_from, reported_at = excluded.reported_at
            WHERE excluded.unconfirmed_from > gateway_outboxes.unconfirmed_from
          RETURNING 1
        )
        UPDATE gateways AS g SET heartbeat_at = v.at FROM v WHERE g.id = v.gateway_id`.execute(db);
    }
    for (const { hb } of moved) positions.set(hb.gateway_id, positionKey(hb));
  }

  return {
    apply(hb, now) {
      next ??= newBatch();
      next.beats.push({ hb, at: now.toISOString() });
      const { done } = next;
      if (!writing) {
        writing = true;
        void writeAll();
      }
      return done;
    },
  };
}

const reachableIds = (hb: Heartbeat) =>
  hb.devices.filter((device) => device.reachable).map((device) => device.device_id);
const positionKey = (hb: Heartbeat) => `${hb.outbox?.id}:${hb.outbox?.unconfirmed_from}`;
