import type { Heartbeat } from "../../shared/wire/messages.ts";
import { deviceRepository } from "../devices/device-repository.ts";
import { type Db, isPostgres } from "../store/db.ts";
import { gatewayOutboxRepository } from "./gateway-outbox-repository.ts";
import { gatewayRepository, gatewaySays } from "./gateway-repository.ts";
import { heartbeatRepository } from "./heartbeat-repository.ts";

type Beat = { hb: Heartbeat; at: string };
type Batch = { beats: Beat[]; done: Promise<void>; resolve: () => void; reject: (err: unknown) => void };

export type HeartbeatIntake = {
  /** Applies a heartbeat received at `now`, with those of other gateways that came meanwhile; resolves once committed. */
  apply(hb: Heartbeat, now: Date): Promise<void>;
};

/**
 * A heartbeat marks its gateway's GUARD and every bus device it reached as seen at its arrival: the
 * cloud's clock, not the gateway's, decides health, so a gateway with a wrong clock cannot look healthy
 * (F14). It writes the gateway's `heartbeat_at` with what the heartbeat says of the gateway (its outbox's
 * depth, its version and start: migration 027) and, only where reachability changed, devices (migration 016). Where its outbox stands is kept for pruning `applied_seqs`.
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
        const gateways = gatewayRepository(trx);
        for (const { hb, at } of beats) {
          await devices.markReachable(hb.gateway_id, reachableIds(hb));
          await gateways.setHeartbeatAt(hb.gateway_id, at, gatewaySays(hb, at));
        }
        const outboxes = gatewayOutboxRepository(trx);
        for (const { hb, at } of moved)
          if (hb.outbox) await outboxes.recordPosition(hb.gateway_id, hb.outbox, at);
      });
    } else {
      // One statement, so one round trip and its own transaction (heartbeat-repository.ts).
      await heartbeatRepository(db).recordAtOnce(
        beats.map(({ hb, at }) => ({
          gateway_id: hb.gateway_id,
          at,
          reachable: reachableIds(hb),
          ...gatewaySays(hb, at),
        })),
        moved.flatMap(({ hb, at }) =>
          hb.outbox
            ? [
                {
                  gateway_id: hb.gateway_id,
                  outbox_id: hb.outbox.id,
                  unconfirmed_from: hb.outbox.unconfirmed_from,
                  at,
                },
              ]
            : [],
        ),
      );
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
