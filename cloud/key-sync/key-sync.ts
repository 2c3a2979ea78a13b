import type { Logger } from "pino";
import type { Clock, TimerHandle } from "../../shared/time/clock.ts";
import {
  type Grant,
  type GrantKey,
  type KeysDown,
  type KeysUp,
  SNAPSHOT_PART_SIZE,
} from "../../shared/wire/messages.ts";
import { type CloudMetrics, createCloudMetrics } from "../metrics.ts";
import type { Db } from "../store/db.ts";
import { keySyncRepository } from "./key-sync-repository.ts";
import { cardGrantsAt } from "./key-view.ts";

export type KeySync = {
  /** These gateways' views changed (in this process): send them what they lack now. */
  keysChanged(gatewayIds: string[]): void;
  /**
   * A gateway's `keys_report`: the version it holds, or a question about a card. Resolves once the report
   * has been answered (a version report: by the answer that took it, possibly a later report's).
   */
  onReport(gatewayId: string, report: KeysUp): Promise<void>;
  start(): void;
  /** Stops the sweep and drops answers still waiting for their interval; waits for those under way. */
  stop(): Promise<void>;
};

/** Change sets older than this many versions behind are not merged into a delta: a snapshot is cheaper. */
const MAX_DELTA_VERSIONS = 500;
/** A gateway's version reports are answered at most once per this interval; only the latest counts. */
export const REPORT_EVERY_MS = 1_000;
/** A gateway gets at most one snapshot per this interval; one needed sooner goes when it ends. */
export const SNAPSHOT_EVERY_MS = 10_000;

/** What the sync keeps per gateway to coalesce its reports and space its snapshots. */
type Pace = {
  /** The latest version reported and not yet taken up by an answer. */
  latest: number | null;
  /** The answer that will take `latest`, while it waits for its interval or its turn. */
  waiting: Promise<void> | null;
  /** Ends `waiting` unanswered (stop). */
  release: (() => void) | null;
  waitTimer: TimerHandle | null;
  /** When (clock ms) the last version report was taken up. */
  reportAt: number | null;
  /** When the last snapshot went out. */
  snapshotAt: number | null;
  /** A snapshot put off to the end of its interval. */
  snapshotTimer: TimerHandle | null;
};

/**
 * The cloud's side of whitelist sync (ARCHITECTURE flow 4). A gateway gets a delta from the version it
 * holds when the change sets since are all stored and small, else a snapshot in parts; it says which
 * version it holds on every connect and after each apply. A sweep repairs what a lost message left behind
 * (a delta lost in a broker restart, a change made by another replica): any online gateway whose confirmed
 * version lags is brought up to date.
 *
 * A tiny report can cost a snapshot of the whole view, so a gateway's reports are coalesced: the first
 * after a quiet interval (`reportEveryMs`) is answered at once, later ones within it replace each other
 * and the latest is answered when it ends; and a gateway gets at most one snapshot per
 * `snapshotEveryMs`, a later one going out at the end of the interval as the view then is. Per process.
 */
export function createKeySync(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  publish: (gatewayId: string, msg: KeysDown) => Promise<void>;
  sweepMs?: number;
  /** 0: every report answered in turn. */
  reportEveryMs?: number;
  /** 0: snapshots unspaced. */
  snapshotEveryMs?: number;
  metrics?: CloudMetrics;
}): KeySync {
  const { db, clock, log } = deps;
  const keys = keySyncRepository(db);
  const reportEveryMs = deps.reportEveryMs ?? REPORT_EVERY_MS;
  const snapshotEveryMs = deps.snapshotEveryMs ?? SNAPSHOT_EVERY_MS;
  const metrics = deps.metrics ?? createCloudMetrics();
  const paces = new Map<string, Pace>();
  const paceOf = (gatewayId: string): Pace => {
    let p = paces.get(gatewayId);
    if (!p) {
      p = {
        latest: null,
        waiting: null,
        release: null,
        waitTimer: null,
        reportAt: null,
        snapshotAt: null,
        snapshotTimer: null,
      };
      paces.set(gatewayId, p);
    }
    return p;
  };
  const nowMs = () => clock.now().getTime();
  /** The version this process last sent each gateway, so back-to-back changes go as consecutive deltas. */
  const sentUpTo = new Map<string, number>();
  /** One sync at a time per gateway, in order. */
  const chains = new Map<string, Promise<void>>();
  let timer: TimerHandle | null = null;

  function enqueue(gatewayId: string, work: () => Promise<void>): Promise<void> {
    const next = (chains.get(gatewayId) ?? Promise.resolve())
      .then(work)
      .catch((err: unknown) => log.warn({ err, gateway: gatewayId }, "key sync failed; the sweep retries"));
    chains.set(gatewayId, next);
    void next.finally(() => {
      if (chains.get(gatewayId) === next) chains.delete(gatewayId);
    });
    return next;
  }

  async function sync(gatewayId: string, from: number | null) {
    const { version, confirmed } = await keys.versionsOf(gatewayId);
    const base = from ?? sentUpTo.get(gatewayId) ?? confirmed;
    if (base === version) return;
    if (base !== null && base < version && version - base <= MAX_DELTA_VERSIONS) {
      const delta = await deltaBetween(gatewayId, base, version);
      if (delta) {
        await deps.publish(gatewayId, delta);
        sentUpTo.set(gatewayId, version);
        return;
      }
    }
    const sent = await sendSnapshotWhenDue(gatewayId);
    if (sent !== null) sentUpTo.set(gatewayId, sent);
  }

  /** A snapshot now, or (within the interval of the last one) a sync when the interval ends: null. */
  function sendSnapshotWhenDue(gatewayId: string): Promise<number | null> {
    const pace = paceOf(gatewayId);
    const due = pace.snapshotAt === null ? 0 : pace.snapshotAt + snapshotEveryMs - nowMs();
    if (due > 0) {
      if (!pace.snapshotTimer) {
        metrics.keySnapshotsDeferred.inc();
        log.info({ gateway: gatewayId, in_ms: due }, "key snapshot put off to the end of its interval");
        pace.snapshotTimer = clock.setTimer(due, () => {
          pace.snapshotTimer = null;
          void enqueue(gatewayId, () => sync(gatewayId, null));
        });
      }
      return Promise.resolve(null);
    }
    pace.snapshotAt = nowMs();
    return sendSnapshot(gatewayId);
  }

  /** Answers the latest version report of a gateway (those before it are moot). */
  async function answerLatest(gatewayId: string, pace: Pace) {
    pace.waiting = null;
    pace.release = null;
    const held = pace.latest;
    pace.latest = null;
    if (held === null) return;
    pace.reportAt = nowMs();
    await confirm(gatewayId, held);
    // What the gateway holds is the base of whatever it needs next.
    sentUpTo.set(gatewayId, held);
    await sync(gatewayId, held);
  }

  function onVersionReport(gatewayId: string, version: number): Promise<void> {
    const pace = paceOf(gatewayId);
    if (pace.latest !== null) metrics.keyReportsCoalesced.inc();
    pace.latest = version;
    if (pace.waiting !== null) return pace.waiting;
    const wait = pace.reportAt === null ? 0 : Math.max(0, pace.reportAt + reportEveryMs - nowMs());
    const answered = new Promise<void>((resolve) => {
      pace.release = resolve;
      const run = () => {
        pace.waitTimer = null;
        void enqueue(gatewayId, () => answerLatest(gatewayId, pace)).then(resolve);
      };
      if (wait === 0) run();
      else pace.waitTimer = clock.setTimer(wait, run);
    });
    // Set before the answer starts (it runs after this turn at the earliest) and clears it.
    pace.waiting = answered;
    return answered;
  }

  async function deltaBetween(gatewayId: string, base: number, version: number): Promise<KeysDown | null> {
    const rows = await keys.changesBetween(gatewayId, base, version);
    if (rows.length !== version - base) return null;
    // Later versions win: one entry per (whitelist, card), an upsert or a removal.
    const merged = new Map<string, { upsert: Grant } | { removal: GrantKey }>();
    for (const r of rows) {
      const c = r.changes;
      for (const k of c.removals) merged.set(`${k.whitelist_id}/${k.card_id}`, { removal: k });
      for (const g of c.upserts) merged.set(`${g.whitelist_id}/${g.card_id}`, { upsert: g });
    }
    if (merged.size > SNAPSHOT_PART_SIZE) return null;
    const upserts: Grant[] = [];
    const removals: GrantKey[] = [];
    for (const e of merged.values()) "upsert" in e ? upserts.push(e.upsert) : removals.push(e.removal);
    return { kind: "delta", gateway_id: gatewayId, base_version: base, version, upserts, removals };
  }

  /** The whole view in parts; read again if a change committed meanwhile, so the parts are one version. */
  async function sendSnapshot(gatewayId: string): Promise<number> {
    for (;;) {
      const { version } = await keys.versionsOf(gatewayId);
      const grants = await keys.grantsOf(gatewayId);
      if ((await keys.versionsOf(gatewayId)).version !== version) continue;
      const parts = Math.max(1, Math.ceil(grants.length / SNAPSHOT_PART_SIZE));
      for (let i = 0; i < parts; i++)
        await deps.publish(gatewayId, {
          kind: "snapshot",
          gateway_id: gatewayId,
          version,
          part: i + 1,
          parts,
          grants: grants.slice(i * SNAPSHOT_PART_SIZE, (i + 1) * SNAPSHOT_PART_SIZE),
        });
      log.info({ gateway: gatewayId, version, grants: grants.length, parts }, "key snapshot sent");
      return version;
    }
  }

  function confirm(gatewayId: string, held: number) {
    return keys.confirm(gatewayId, held, clock.now().toISOString());
  }

  async function sweep() {
    for (const g of await keys.onlineVersions()) {
      const { confirmed } = g;
      // A gateway that never confirmed anything has said nothing yet: it reports on connect.
      if (confirmed === null || confirmed === (g.version ?? 0)) continue;
      void enqueue(g.id, () => sync(g.id, confirmed));
    }
  }

  return {
    keysChanged(gatewayIds) {
      for (const id of gatewayIds) void enqueue(id, () => sync(id, null));
    },
    onReport(gatewayId, report) {
      if (report.kind === "query")
        return (async () => {
          const grants = await cardGrantsAt(db, gatewayId, report.card_id);
          await deps.publish(gatewayId, {
            kind: "answer",
            gateway_id: gatewayId,
            query_id: report.query_id,
            card_id: report.card_id,
            grants,
          });
        })();
      return onVersionReport(gatewayId, report.version);
    },
    start() {
      const tick = () => {
        timer = clock.setTimer(deps.sweepMs ?? 30_000, () => {
          void sweep()
            .catch((err: unknown) => log.warn({ err }, "key sync sweep failed"))
            .finally(() => timer !== null && tick());
        });
      };
      tick();
    },
    async stop() {
      if (timer) clock.clearTimer(timer);
      timer = null;
      for (const pace of paces.values()) {
        if (pace.snapshotTimer) clock.clearTimer(pace.snapshotTimer);
        pace.snapshotTimer = null;
        if (!pace.waitTimer) continue; // an answer on its way is waited for below
        clock.clearTimer(pace.waitTimer);
        pace.waitTimer = null;
        pace.release?.();
        pace.waiting = null;
        pace.release = null;
        pace.latest = null;
      }
      await Promise.allSettled([...chains.values()]);
    },
  };
}
