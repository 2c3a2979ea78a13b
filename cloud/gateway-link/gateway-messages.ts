import type { Logger } from "pino";
import { z } from "zod";
import type { Clock } from "../../shared/time/clock.ts";
import { compiledOnUse } from "../../shared/wire/compiled.ts";
import { Heartbeat, KeysUp, OutboxId, Status, UpMessage } from "../../shared/wire/messages.ts";
import { parseTopic } from "../../shared/wire/topics.ts";
import { redeliverPending } from "../commands/command-delivery.ts";
import type { CommandTimeoutConfig } from "../devices/timeouts.ts";
import type { KeySync } from "../key-sync/key-sync.ts";
import type { GatewayMessageKind, GatewayRefusal } from "../metrics.ts";
import type { CommandSettledNotifier, GatewayPublisher } from "../ports.ts";
import { storageAlarm } from "../site-events/storage-alarms.ts";
import type { Db } from "../store/db.ts";
import { createAckBatcher } from "./ack-batcher.ts";
import { applyUpMessage } from "./apply-up-message.ts";
import type { HandedOn } from "./gateway-chains.ts";
import { applyStatus } from "./gateway-reports.ts";
import type { HeartbeatIntake } from "./heartbeat-intake.ts";
import { createOfflineGrace } from "./offline-grace.ts";
import { createOutboxHold } from "./outbox-hold.ts";
import type { ReportIntake } from "./report-intake.ts";

/** Enough of an up message to acknowledge it when nothing else in it can be used. */
const SeqOnly = z.object({
  seq: z.number().int().positive(),
  outbox_id: z.optional(OutboxId).catch(undefined),
});

/**
 * What a gateway's message on each up channel does: outbox messages are applied once and acknowledged,
 * heartbeats go to the intake, a status is kept (and an online gateway gets its map and what waits for
 * it), key reports go to the key sync. A message that does not parse or names another gateway is dropped
 * and counted.
 */
export function createGatewayMessages(deps: {
  prefix: string;
  db: Db;
  /** Where command progress is applied: a pool of its own, so a request waiting on it is not behind reports. */
  commandDb?: Db;
  clock: Clock;
  log: Logger;
  timeouts: CommandTimeoutConfig;
  settled?: CommandSettledNotifier;
  refused: (type: GatewayMessageKind, reason: GatewayRefusal) => void;
  publisher: GatewayPublisher;
  heartbeats: HeartbeatIntake;
  /** Where device reports go, many gateways' to a transaction (report-intake.ts); others one by one. */
  reports?: ReportIntake;
  keySync: KeySync;
  publishDeviceMaps: (gatewayIds: string[]) => Promise<void>;
  /** Answers a session's (or a heartbeat's) `sync` token with the cloud's time (docs/decisions/clock.md). */
  echoSync: (gatewayId: string, sync: string) => Promise<void>;
}) {
  const { db, clock, log, timeouts, refused, publisher } = deps;
  const done = Promise.resolve();
  const acks = createAckBatcher(publisher);
  const hold = createOutboxHold(clock);

  /**
   * A device report goes to the intake without waiting for the gateway's earlier messages (the intake keeps
   * a gateway's order: its batches commit one after another), so the reports a gateway sends together join
   * one batch; everything else waits for them. Acknowledged only once committed: an acknowledged report
   * must survive a crash.
   */
  function onUp(
    gatewayId: string,
    payload: unknown,
    earlier: Promise<void>,
  ): Promise<void> | HandedOn | undefined {
    const parsed = compiledOnUse(UpMessage).safeParse(payload);
    const msg = parsed.success ? parsed.data : null;
    const outbox = msg?.outbox_id ?? "";
    if (msg && msg.gateway_id === gatewayId && hold.waits(gatewayId, outbox, msg.seq)) {
      refused(msg.type, "out_of_order");
      log.debug({ gateway_id: gatewayId, seq: msg.seq }, "waits for an earlier message the store refused");
      return;
    }
    // In order across a full store: what follows a refused message waits for it (outbox-hold.ts).
    const kept = (p: Promise<void>) =>
      msg
        ? p.then(
            () => hold.applied(gatewayId, outbox, msg.seq),
            (err: unknown) => {
              hold.failed(gatewayId, outbox, msg.seq, err);
              throw err;
            },
          )
        : p;
    if (msg?.type === "device_state" && msg.gateway_id === gatewayId && deps.reports?.batches) {
      const applied = deps.reports
        .apply(gatewayId, msg, clock.now())
        .then(() => acks.ack(gatewayId, msg.seq, outbox));
      return { applied: kept(applied) };
    }
    const issues = parsed.success ? undefined : parsed.error.issues.slice(0, 5);
    return kept(earlier.then(() => applyUp(gatewayId, payload, msg, issues)));
  }

  async function applyUp(
    gatewayId: string,
    payload: unknown,
    msg: UpMessage | null,
    issues: unknown[] | undefined,
  ) {
    if (!msg || msg.gateway_id !== gatewayId) {
      // A message that can never be applied is dropped, but acknowledged when its sequence number can be
      // read: otherwise the sender would resend it forever and hold up everything behind it.
      const seq = SeqOnly.safeParse(payload);
      refused(msg?.type ?? "up", msg ? "other_gateway" : "invalid");
      log.error(
        {
          gateway_id: gatewayId,
          named: msg?.gateway_id,
          seq: seq.success ? seq.data.seq : null,
          issues,
        },
        msg ? "message names another gateway: dropped" : "invalid up message dropped",
      );
      if (seq.success) await publisher.ack(gatewayId, [seq.data.seq], seq.data.outbox_id ?? "");
      return;
    }
    // A duplicate is acknowledged again: its first ack was evidently lost. The ack names the outbox ("" :
    // none), so a gateway whose store was made again does not take it for its own seq.
    if (msg.type === "device_state" && deps.reports) await deps.reports.apply(gatewayId, msg, clock.now());
    else
      await applyUpMessage(msg.type === "command_progress" ? (deps.commandDb ?? db) : db, gatewayId, msg, {
        now: clock.now(),
        timeouts,
        log,
        settled: deps.settled,
        refused,
      });
    await publisher.ack(gatewayId, [msg.seq], msg.outbox_id ?? "");
  }

  /** Applies a status received at `at`; an offline of an earlier session changes nothing (logged). */
  async function keepStatus(st: Status, at: Date) {
    const applied = await applyStatus(db, st, at);
    if (!applied) log.info({ gateway_id: st.gateway_id }, "a Last Will of an earlier session: ignored");
  }

  // Outside the gateway's chain: its later messages (the new session's `online`) must not wait for it.
  const offlines = createOfflineGrace({
    clock,
    apply: (st, at) =>
      keepStatus(st, at).catch((err: unknown) =>
        log.error({ err, gateway_id: st.gateway_id }, "gateway offline not kept"),
      ),
  });

  async function onStatus(st: Status) {
    // An offline naming no session cannot be told from a later one's: applied at once, as it always was.
    if (!st.online && st.sync) return offlines.hold(st);
    await keepStatus(st, clock.now());
    if (!st.online) return;
    // First, so a gateway holding a command that waited in the broker judges it on the cloud's time now.
    if (st.sync) await deps.echoSync(st.gateway_id, st.sync);
    // The gateway announces itself only once subscribed: its map (a broker restarted without persistence
    // has lost the retained copy) and whatever waits for it can be delivered now, in that order.
    await deps.publishDeviceMaps([st.gateway_id]);
    await redeliverPending(db, publisher, st.gateway_id, { clock, timeouts, log });
  }

  /** Whether each gateway's wall clock was last reported off the cloud's beyond the bound. */
  const skewed = new Map<string, boolean>();
  /** Whether each gateway's store was full at its last heartbeat, as this process heard it. */
  const storageFull = new Map<string, boolean>();
  /**
   * Logs when a gateway's wall clock goes off the cloud's, or comes back (once per change, not per beat).
   * Nothing the cloud decides rests on it: it records its own time for what a gateway reports.
   */
  function noteClock(hb: Heartbeat) {
    if (!hb.clock || skewed.get(hb.gateway_id) === hb.clock.skewed) return;
    skewed.set(hb.gateway_id, hb.clock.skewed);
    const fields = { gateway_id: hb.gateway_id, clock_offset_ms: hb.clock.offset_ms };
    if (hb.clock.skewed) log.warn(fields, "gateway's wall clock is off the cloud's");
    else log.info(fields, "gateway's wall clock agrees with the cloud's");
  }

  /** A store that became full (or has room again) raises (or clears) the gateway's `storage_full` alarm. */
  function noteStorage(hb: Heartbeat) {
    const storage = hb.storage;
    if (!storage || storageFull.get(hb.gateway_id) === storage.full) return;
    storageFull.set(hb.gateway_id, storage.full);
    const fields = { gateway_id: hb.gateway_id, free_bytes: storage.free_bytes };
    if (storage.full) log.error(fields, "gateway's state store is full");
    else log.info(fields, "gateway's state store has room");
    storageAlarm(db, hb.gateway_id, storage, clock.now()).catch((err: unknown) => {
      storageFull.delete(hb.gateway_id); // tried again with the next heartbeat
      log.error({ err, gateway_id: hb.gateway_id }, "storage alarm not kept");
    });
  }

  /** A message's content when it parsed and names the gateway of its topic; otherwise counted: null. */
  function usable<T extends { gateway_id: string }>(
    parsed: { success: true; data: T } | { success: false },
    t: { gatewayId: string; channel: GatewayMessageKind },
  ): T | null {
    const reason = !parsed.success
      ? "invalid"
      : parsed.data.gateway_id !== t.gatewayId
        ? "other_gateway"
        : null;
    if (parsed.success && reason === null) return parsed.data;
    refused(t.channel, reason ?? "invalid");
    log.warn({ gateway_id: t.gatewayId, channel: t.channel, reason }, "gateway message dropped");
    return null;
  }

  /** Applies one message of a gateway once its earlier ones are (gateway-chains.ts), or hands it on. */
  function apply(topic: string, raw: Buffer, earlier: Promise<void> = done): Promise<void> | HandedOn | void {
    const parsedTopic = parseTopic(deps.prefix, topic);
    if (!parsedTopic) return;
    const t = { gatewayId: parsedTopic.gatewayId, channel: parsedTopic.channel as GatewayMessageKind };
    let payload: unknown;
    try {
      payload = JSON.parse(raw.toString("utf8"));
    } catch {
      refused(t.channel, "invalid");
      return log.warn({ topic }, "non-JSON message dropped");
    }
    switch (t.channel) {
      case "up":
        return onUp(t.gatewayId, payload, earlier);
      case "hb":
      case "status":
      case "keys_report":
        return earlier.then(() => applyOther(t, payload));
      default:
        return;
    }
  }

  function applyOther(t: { gatewayId: string; channel: GatewayMessageKind }, payload: unknown) {
    switch (t.channel) {
      case "hb": {
        const hb = usable(Heartbeat.safeParse(payload), t);
        if (!hb) return;
        noteClock(hb);
        noteStorage(hb);
        // Answered first and apart from the beat's keeping: the round trip's length is the bound's width.
        if (hb.sync)
          deps
            .echoSync(hb.gateway_id, hb.sync)
            .catch((err: unknown) => log.debug({ err, gateway_id: hb.gateway_id }, "probe not answered"));
        return deps.heartbeats.apply(hb, clock.now());
      }
      case "status": {
        const st = usable(Status.safeParse(payload), t);
        return st ? onStatus(st) : undefined;
      }
      case "keys_report": {
        const report = usable(KeysUp.safeParse(payload), t);
        if (!report) return;
        // Version reports are coalesced by the key sync (only a gateway's latest matters), so the
        // gateway's other messages do not wait for one to be answered.
        if (report.kind === "version") return void deps.keySync.onReport(t.gatewayId, report);
        return deps.keySync.onReport(t.gatewayId, report);
      }
      default:
        return;
    }
  }

  return {
    apply,
    /** Drops the offlines waiting out their grace; gives those being applied, to wait for. */
    stop: offlines.stop,
  };
}
