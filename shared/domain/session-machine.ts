/**
 * The session lifecycle (spec: States and transitions → Session status), as a pure function of the
 * session's immutable events. The status is never stored on its own authority: it is what folding the
 * events gives.
 *
 *   (created) → pending
 *   pending --book--> booked     booked_time, booked_until_time set
 *   pending --start-> active     a session may skip booked; start_time set
 *   booked  --start-> active
 *   active  --end---> ended      end_time set
 *   booked  --end---> ended      not in the spec's table: a booking cancelled or expired before the
 *                                 lock (docs/decisions/sessions-and-billing.md); the billing rules
 *                                 measure such a session "from booked to end"
 */
export const SESSION_STATUSES = ["pending", "booked", "active", "ended"] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

/** pause and resume belong to rental sessions (spec: Session events); parking sessions never have them. */
export const SESSION_EVENT_NAMES = ["book", "start", "end"] as const;
export type SessionEventName = (typeof SESSION_EVENT_NAMES)[number];

export type SessionEvent =
  | { name: "book"; timestamp: string; booked_until: string }
  | { name: "start"; timestamp: string }
  | { name: "end"; timestamp: string };

/** What the events say about a session. */
export type SessionView = {
  status: SessionStatus;
  booked_time: string | null;
  booked_until_time: string | null;
  start_time: string | null;
  end_time: string | null;
};

export const NEW_SESSION: SessionView = {
  status: "pending",
  booked_time: null,
  booked_until_time: null,
  start_time: null,
  end_time: null,
};

const NEXT: Record<SessionStatus, Partial<Record<SessionEventName, SessionStatus>>> = {
  pending: { book: "booked", start: "active" },
  booked: { start: "active", end: "ended" },
  active: { end: "ended" },
  ended: {},
};

/** The status an event leads to, or null when it does not apply in `status`. */
export function nextSessionStatus(status: SessionStatus, name: SessionEventName): SessionStatus | null {
  return NEXT[status][name] ?? null;
}

export function isOpen(status: SessionStatus): boolean {
  return status !== "ended";
}

/** Applies one event; null when the machine refuses it (the view stays as it was). */
export function applySessionEvent(view: SessionView, event: SessionEvent): SessionView | null {
  const status = nextSessionStatus(view.status, event.name);
  if (!status) return null;
  switch (event.name) {
    case "book":
      return { ...view, status, booked_time: event.timestamp, booked_until_time: event.booked_until };
    case "start":
      return { ...view, status, start_time: event.timestamp };
    case "end":
      return { ...view, status, end_time: event.timestamp };
  }
}

/** Folds a session's recorded events; a history the machine refuses is corrupt and throws. */
export function deriveSession(events: readonly SessionEvent[]): SessionView {
  let view = NEW_SESSION;
  for (const e of events) {
    const next = applySessionEvent(view, e);
    if (!next) throw new Error(`session history does not fold: ${e.name} while ${view.status}`);
    view = next;
  }
  return view;
}

/** The time of the session's latest event (book, start or end); null while it has none. */
export function lastEventTime(view: SessionView): string | null {
  const times = [view.booked_time, view.start_time, view.end_time].filter((t): t is string => t !== null);
  return times.reduce<string | null>((a, t) => (a === null || Date.parse(t) > Date.parse(a) ? t : a), null);
}

/**
 * When the billed period starts: the booking when there was one, else the start (spec: Limits, billing
 * rule 3, "measured from start to end or from booked to end"). Null when the session never began.
 */
export function billedFrom(view: SessionView): string | null {
  return view.booked_time ?? view.start_time;
}

/** The time of the event that gave the session its status (creation for pending): what from/to filter on. */
export function statusTime(view: SessionView, createdAt: string): string {
  switch (view.status) {
    case "pending":
      return createdAt;
    case "booked":
      return view.booked_time ?? createdAt;
    case "active":
      return view.start_time ?? createdAt;
    case "ended":
      return view.end_time ?? createdAt;
  }
}

/** Pending sessions expire after 30 days (spec: Limits). */
export const PENDING_LIFETIME_MS = 30 * 24 * 60 * 60 * 1000;

export function isExpiredPending(status: SessionStatus, createdAt: string, now: Date): boolean {
  return status === "pending" && Date.parse(createdAt) + PENDING_LIFETIME_MS <= now.getTime();
}
