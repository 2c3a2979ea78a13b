import { useEffect, useRef, useState } from "preact/hooks";
import { checkSession } from "./api.ts";

/**
 * The page's one live stream (GET /console/api/live, server-sent events) and what views hang on it. A view
 * names the topics it shows — `location:<id>` (one location and its devices), `location` (any), `alarms`,
 * `sessions`, `commands`, `audit` — and reads its data again when one of them moves, and after every
 * (re)connection, since changes made while the stream was down were never pushed.
 */

export type LiveTopic = "location" | `location:${string}` | "alarms" | "sessions" | "commands" | "audit";

/** What the header shows: connecting (first time), live, or down and reconnecting. */
export type LiveState = "connecting" | "live" | "reconnecting";
export type LiveStatus = { state: LiveState; updatedAt: number | null };

const LIVE_URL = "/console/api/live";
const TOPIC_EVENTS = ["location", "alarms", "sessions", "commands", "audit"] as const;
/** After a refusal (the stream closed for good, e.g. 401 or 429), the next try waits this long, doubling. */
const FIRST_BACKOFF_MS = 2_000;
const MAX_BACKOFF_MS = 30_000;

type Subscriber = { topics: readonly LiveTopic[]; fire: () => void };

const subscribers = new Set<Subscriber>();
const statusWatchers = new Set<(s: LiveStatus) => void>();
let status: LiveStatus = { state: "connecting", updatedAt: null };
let source: EventSource | null = null;
let backoff = FIRST_BACKOFF_MS;
let retry: ReturnType<typeof setTimeout> | null = null;
/** The cloud's clock minus the browser's, from the stream's `ready`; null until it came. */
let offset: number | null = null;

function setStatus(next: Partial<LiveStatus>) {
  status = { ...status, ...next };
  for (const w of statusWatchers) w(status);
}

/** A change or a refresh just came: the header's age starts again. */
export function markUpdated() {
  setStatus({ updatedAt: Date.now() });
}

function dispatch(topic: string, id?: string) {
  markUpdated();
  for (const s of subscribers)
    if (s.topics.includes(topic as LiveTopic) || (id !== undefined && s.topics.includes(`location:${id}`)))
      s.fire();
}

function connect() {
  retry = null;
  const es = new EventSource(LIVE_URL);
  source = es;
  es.addEventListener("ready", (e) => {
    backoff = FIRST_BACKOFF_MS;
    const now = Date.parse((JSON.parse(e.data) as { now: string }).now);
    if (!Number.isNaN(now)) offset = now - Date.now();
    setStatus({ state: "live" });
    // Whatever changed before the stream watched (or while it was down) is read afresh.
    for (const s of subscribers) s.fire();
  });
  for (const name of TOPIC_EVENTS)
    es.addEventListener(name, (e) => {
      const data = JSON.parse(e.data) as { id?: string };
      dispatch(name, name === "location" ? data.id : undefined);
    });
  es.onerror = () => {
    if (source !== es) return;
    setStatus({ state: "reconnecting" });
    // CONNECTING: the browser reconnects by itself after the stream's `retry`. CLOSED: it gave up (a refusal).
    if (es.readyState === EventSource.CLOSED) {
      source = null;
      // An EventSource never says why; a refusal may be the session's end (401), which the API tells.
      checkSession();
      retry = setTimeout(connect, backoff);
      backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
    }
  };
}

/** Opens the stream (once per page) for the signed-in staff member. */
export function startLive() {
  if (!source && !retry) connect();
}

/** Closes the stream (signing out). */
export function stopLive() {
  source?.close();
  source = null;
  if (retry) clearTimeout(retry);
  retry = null;
  setStatus({ state: "connecting", updatedAt: null });
}

/** The cloud's time now, or null before the stream said it (a wrong browser clock then misleads nobody). */
export function cloudNow(): number | null {
  return offset === null ? null : Date.now() + offset;
}

/**
 * Calls `refetch` when one of `topics` moves or the stream (re)connects. A refetch running when another
 * change comes is followed by one more, never run twice at once; its end counts as an update.
 */
export function useLive(topics: readonly LiveTopic[], refetch: () => Promise<unknown> | undefined) {
  const latest = useRef(refetch);
  latest.current = refetch;
  const key = topics.join(" ");
  useEffect(() => {
    let running = false;
    let again = false;
    const run = async () => {
      running = true;
      try {
        await latest.current();
        markUpdated();
      } catch {
        // The view shows its own error; the next change tries again.
      } finally {
        running = false;
        if (again) {
          again = false;
          void run();
        }
      }
    };
    const sub: Subscriber = {
      topics,
      fire: () => {
        if (running) again = true;
        else void run();
      },
    };
    subscribers.add(sub);
    return () => {
      subscribers.delete(sub);
    };
  }, [key]);
}

/** The stream's state, kept current. */
export function useLiveStatus(): LiveStatus {
  const [s, set] = useState(status);
  useEffect(() => {
    statusWatchers.add(set);
    set(status);
    return () => {
      statusWatchers.delete(set);
    };
  }, []);
  return s;
}

/** Re-renders every second (an age, a countdown). */
export function useSecondTick() {
  const [, tick] = useState(0);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
}
