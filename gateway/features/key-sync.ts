import type { Logger } from "pino";
import { cronTask, parseCron } from "../../shared/time/cron.ts";
import type { KeysDown } from "../../shared/wire/messages.ts";
import type { BrokerLink, Clock, KeyCache } from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";

/**
 * The gateway's side of whitelist sync (ARCHITECTURE flow 4). It tells the cloud the key version it holds
 * on every connect, after applying a delta or a complete snapshot, and when a delta does not fit the
 * version held; the cloud answers with what is missing (deltas or a snapshot), so a gateway that was away
 * for a week converges by itself. It says it again when the cloud asks for a resend (the cloud has just
 * reconnected: after a broker restart the report of our own connect may have gone to a broker the cloud was
 * not yet subscribed to, and the delta it answered with is lost too). A cron sweep deletes expired grants
 * (the decision checks expiry anyway), expired on the cloud's clock as the gateway knows it, and only once it
 * knows it: a wall clock ahead would delete grants still valid, and a card kept for offline use would stop
 * opening.
 */
export function createKeySync(deps: {
  gatewayId: string;
  keys: KeyCache;
  broker: Pick<BrokerLink, "publishKeysReport" | "on" | "off">;
  clock: Clock;
  /** The cloud's clock as the gateway knows it (no sweep before it has heard the cloud); else the wall clock. */
  cloudTime?: Pick<CloudClock, "cloudNow">;
  log: Logger;
  /** When to delete expired grants (cron syntax, shared/time/cron.ts); never when null. */
  sweep: string | null;
}) {
  let task: ReturnType<typeof cronTask> | null = null;

  const report = () => {
    const version = deps.keys.version();
    deps.broker.publishKeysReport({ kind: "version", gateway_id: deps.gatewayId, version });
  };

  function apply(msg: KeysDown): void {
    if (msg.kind === "delta") {
      const held = deps.keys.version();
      if (deps.keys.applyDelta(msg)) {
        deps.log.info(
          {
            version: msg.version,
            upserts: msg.upserts.length,
            removals: msg.removals.length,
          },
          "keys delta applied",
        );
      } else {
        // Lost or repeated deltas: the cloud learns what we hold and sends what fits (or a snapshot).
        deps.log.info(
          { held, base: msg.base_version, version: msg.version },
          "keys delta does not fit; reporting",
        );
      }
      report();
    } else if (msg.kind === "snapshot") {
      if (deps.keys.applySnapshotPart(msg) === "staged") return;
      deps.log.info(
        { version: msg.version, grants: deps.keys.count(), parts: msg.parts },
        "keys snapshot applied",
      );
      report();
    }
  }

  const onAck = (_seqs: number[], resend: boolean) => {
    if (resend) report();
  };

  const onKeys = (msg: KeysDown) => {
    try {
      apply(msg);
    } catch (err) {
      // Bad input changes nothing; the version report on the next connect sets things right.
      deps.log.warn({ err, kind: msg.kind }, "keys message not applied");
    }
  };

  function purge(): number {
    // Not before the gateway has heard the cloud: by a wall clock set ahead, grants still valid would go, and
    // offline they would open nothing. The decision checks expiry anyway, so a sweep put off loses nothing.
    const now = deps.cloudTime ? deps.cloudTime.cloudNow() : deps.clock.now();
    if (!now) return 0;
    const gone = deps.keys.purgeExpired(now);
    if (gone > 0) deps.log.info({ grants: gone }, "expired grants deleted");
    return gone;
  }

  return {
    purge,
    start(): void {
      deps.broker.on("connected", report);
      deps.broker.on("keys", onKeys);
      deps.broker.on("ack", onAck);
      if (deps.sweep) {
        task = cronTask(deps.clock, parseCron(deps.sweep), purge, (err) =>
          deps.log.warn({ err }, "deleting expired grants failed"),
        );
        task.start();
      }
    },
    stop(): void {
      deps.broker.off("connected", report);
      deps.broker.off("keys", onKeys);
      deps.broker.off("ack", onAck);
      task?.stop();
      task = null;
    },
  };
}

export type KeySync = ReturnType<typeof createKeySync>;
