import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import { LIVE_TOPICS, type LiveRepository, type LiveTopic, liveRepository } from "./live-repository.ts";

/** One event of the console's live stream: a location changed (its id and data_version), or a topic did. */
export type LiveEvent =
  | { name: "location"; data: { id: string; data_version: number } }
  | { name: LiveTopic; data: { operator_id: string } };

export type LiveListener = (event: LiveEvent) => void;

export type LiveWatch = {
  /**
   * Pushes the changes of these operators to `listener` until `stop`. `ready` settles once the watch has
   * read where they stand: a change after it is pushed, one before it the caller reads afresh.
   */
  subscribe(operatorIds: readonly string[], listener: LiveListener): { ready: Promise<void>; stop(): void };
  /** How many operators are watched (nobody streaming: none, and no timer runs). */
  watched(): number;
  close(): void;
};

export type LiveWatchOptions = {
  /** How often the store is asked, in ms of the process's own timers (default 250). */
  pollMs?: number;
  /** How far back a topic's changes are read (default 30 s): longer than a write's transaction lasts. */
  lookbackMs?: number;
};

/** What the watch knows of one operator: who listens, and the watermarks of its last poll. */
type Scope = {
  listeners: Set<LiveListener>;
  versions: Map<string, number> | null;
  seen: Map<LiveTopic, Set<string>>;
};

const emit = (scope: Scope, event: LiveEvent) => {
  for (const listener of scope.listeners) listener(event);
};

/** Reads one operator's watermarks and pushes what moved since the last poll (the first one only reads). */
async function pollScope(repo: LiveRepository, operatorId: string, scope: Scope, since: string) {
  const [versions, ...changes] = await Promise.all([
    repo.locationVersions(operatorId),
    ...LIVE_TOPICS.map((t) => repo.recentChanges(t, operatorId, since)),
  ]);
  const first = scope.versions === null;
  for (const [id, version] of versions)
    if (!first && scope.versions?.get(id) !== version)
      emit(scope, { name: "location", data: { id, data_version: version } });
  scope.versions = versions;
  LIVE_TOPICS.forEach((topic, i) => {
    const now = new Set(changes[i]);
    const before = scope.seen.get(topic);
    // A key never seen is a change; one leaving the window is not.
    if (before && [...now].some((k) => !before.has(k)))
      emit(scope, { name: topic, data: { operator_id: operatorId } });
    scope.seen.set(topic, now);
  });
}

/**
 * The per-process change watch behind GET /console/api/live (docs/decisions/console.md): nothing on the
 * write path; every `pollMs`, for the operators with an open stream only, it reads cheap watermarks from the
 * shared store (cloud/console/live-repository.ts) and pushes what moved. The store being shared, a change
 * made through another replica reaches this one's streams too. The poll is paced by the process's timers,
 * not the injected clock: it is delivery, not domain time; the lookback window is on the injected clock,
 * as the rows' timestamps are.
 */
export function createLiveWatch(
  deps: { db: Db; clock: Clock; log?: (err: unknown) => void } & LiveWatchOptions,
) {
  const repo = liveRepository(deps.db);
  const pollMs = deps.pollMs ?? 250;
  const lookbackMs = deps.lookbackMs ?? 30_000;
  const scopes = new Map<string, Scope>();
  let waiting: (() => void)[] = [];
  let timer: NodeJS.Timeout | null = null;
  let polling = false;
  let closed = false;
  const since = () => new Date(deps.clock.now().getTime() - lookbackMs).toISOString();

  async function tick() {
    timer = null;
    polling = true;
    const settle = waiting;
    waiting = [];
    try {
      await Promise.all(
        [...scopes].map(([id, scope]) =>
          pollScope(repo, id, scope, since()).catch((err: unknown) => deps.log?.(err)),
        ),
      );
    } finally {
      polling = false;
      for (const done of settle) done();
      schedule();
    }
  }

  function schedule() {
    if (closed || timer || polling || scopes.size === 0) return;
    timer = setTimeout(() => void tick(), waiting.length > 0 ? 0 : pollMs);
    timer.unref();
  }

  return {
    subscribe(operatorIds, listener) {
      for (const id of operatorIds) {
        let scope = scopes.get(id);
        if (!scope) {
          scope = { listeners: new Set(), versions: null, seen: new Map() };
          scopes.set(id, scope);
        }
        scope.listeners.add(listener);
      }
      const ready = new Promise<void>((resolve) => waiting.push(resolve));
      if (timer && !polling) {
        // A new stream need not wait a whole period to learn where things stand.
        clearTimeout(timer);
        timer = null;
      }
      schedule();
      return {
        ready,
        stop() {
          for (const id of operatorIds) {
            const scope = scopes.get(id);
            scope?.listeners.delete(listener);
            if (scope && scope.listeners.size === 0) scopes.delete(id);
          }
          if (scopes.size === 0 && timer) {
            clearTimeout(timer);
            timer = null;
          }
        },
      };
    },
    watched: () => scopes.size,
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      timer = null;
      scopes.clear();
      for (const done of waiting) done();
      waiting = [];
    },
  } satisfies LiveWatch;
}
