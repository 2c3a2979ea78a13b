import { sql } from "kysely";
import type { Db } from "../store/db.ts";
import type { GatewaySays } from "./gateway-repository.ts";

/** A gateway's heartbeat as written: when it arrived, the bus devices it reached, what it said of itself (absent: null). */
export type HeartbeatSeen = { gateway_id: string; at: string; reachable: string[] } & Partial<GatewaySays>;
/** Where a gateway's outbox stood at a heartbeat. */
export type OutboxReport = { gateway_id: string; outbox_id: string; unconfirmed_from: number; at: string };

/** PostgreSQL's batch of heartbeats: what a heartbeat writes, for many gateways in one statement. */
export function heartbeatRepository(db: Db) {
  return {
    /**
     * One statement, so one round trip and its own transaction. As markReachable for every gateway at
     * once (reads each gateway's devices, writes the few that changed: every part of the statement reads
     * the gateways as they were before it), then each gateway's heartbeat_at: the cloud's now, even when
     * its clock was stepped back (a guard against going back would leave every gateway unseen until it
     * caught up), and in the same update what the heartbeat said of the gateway (outbox depth, runtime;
     * null where it did not say). The devices whose reachability flips are locked in id order first, as
     * every writer of several devices takes them (report-batch.ts). The outbox positions as recordPosition:
     * only a higher one is written, a new outbox
     * starts its checkpoint. The LIMIT tells the planner how many rows the JSON holds (it assumes 100), so
     * a small batch looks its gateways up by key instead of scanning them. PostgreSQL only.
     */
    async recordAtOnce(beats: readonly HeartbeatSeen[], outboxes: readonly OutboxReport[]): Promise<void> {
      await sql`
        WITH v AS MATERIALIZED (
          SELECT * FROM json_to_recordset(${JSON.stringify(beats)}::json) AS x(gateway_id text, at text, reachable text[],
            outbox_depth integer, runtime_version text, runtime_started_at text)
          LIMIT ${beats.length}
        ),
        flips AS MATERIALIZED (
          SELECT d.id, g.heartbeat_at
          FROM v JOIN gateways AS g ON g.id = v.gateway_id JOIN devices AS d ON d.gateway_id = v.gateway_id
          WHERE d.type <> 'GUARD' AND d.reachable <> CASE WHEN d.id = ANY (v.reachable) THEN 1 ELSE 0 END
          ORDER BY d.id
          FOR NO KEY UPDATE OF d
        ),
        reach AS (
          UPDATE devices AS d
          SET reachable = 1 - d.reachable,
              seen_at = CASE WHEN d.reachable = 1 AND f.heartbeat_at > coalesce(d.seen_at, '')
                        THEN f.heartbeat_at ELSE d.seen_at END
          FROM flips AS f
          WHERE d.id = f.id
          RETURNING 1
        ),
        positions AS (
          INSERT INTO gateway_outboxes
            (gateway_id, outbox_id, unconfirmed_from, reported_at, checkpoint_from, checkpoint_at)
          SELECT o.gateway_id, o.outbox_id, o.unconfirmed_from, o.at, o.unconfirmed_from, o.at
          FROM json_to_recordset(${JSON.stringify(outboxes)}::json)
            AS o(gateway_id text, outbox_id text, unconfirmed_from integer, at text)
          ON CONFLICT (gateway_id, outbox_id) DO UPDATE
            SET unconfirmed_from = excluded.unconfirmed_from, reported_at = excluded.reported_at
            WHERE excluded.unconfirmed_from > gateway_outboxes.unconfirmed_from
          RETURNING 1
        )
        UPDATE gateways AS g
        SET heartbeat_at = v.at, outbox_depth = v.outbox_depth, runtime_version = v.runtime_version,
            runtime_started_at = v.runtime_started_at
        FROM v WHERE g.id = v.gateway_id`.execute(db);
    },
  };
}
