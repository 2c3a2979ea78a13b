/**
 * An alarm's lifecycle, as a pure function (docs/decisions/alarms.md). Modelled on ThingsBoard's alarm
 * entity and AWS IoT Events' alarms:
 *
 *   (raised)      → ACTIVE
 *   ACTIVE        → ACKNOWLEDGED (acknowledge, with a note) | CLEARED (clear)
 *   ACKNOWLEDGED  → CLEARED (clear)
 *   CLEARED is final: the same trouble again raises a new alarm.
 *
 * While an alarm is open (ACTIVE or ACKNOWLEDGED) the same kind on the same subject is another occurrence
 * of it, counted, not a new alarm; an occurrence keeps the status (an acknowledged alarm stays
 * acknowledged: someone is on it). It may be assigned (or unassigned) while open. Every change is one
 * history entry.
 */
export const ALARM_STATUSES = ["ACTIVE", "ACKNOWLEDGED", "CLEARED"] as const;
export type AlarmStatus = (typeof ALARM_STATUSES)[number];

export const ALARM_SEVERITIES = ["CRITICAL", "MAJOR", "MINOR", "WARNING"] as const;
export type AlarmSeverity = (typeof ALARM_SEVERITIES)[number];

/** Who changed an alarm: a staff member, an API client, or the cloud itself. Ids are opaque here. */
export type AlarmActor = { kind: "staff" | "client" | "system"; id: string };
export const SYSTEM_ACTOR: AlarmActor = { kind: "system", id: "cloud" };

/** What an alarm's lifecycle keeps; the subject, kind and details live beside it. */
export type AlarmLife = {
  status: AlarmStatus;
  occurrences: number;
  raised_at: string;
  updated_at: string;
  last_occurred_at: string;
  acknowledged: { by: AlarmActor; at: string; note: string } | null;
  assignee: AlarmActor | null;
  cleared: { by: AlarmActor; at: string; note: string } | null;
};

export type AlarmAction =
  | { kind: "occur" }
  | { kind: "acknowledge"; note: string }
  | { kind: "assign"; assignee: AlarmActor | null }
  | { kind: "clear"; note: string };

/** One change of an alarm, as its history keeps it. */
export type AlarmChange = {
  action: "raise" | AlarmAction["kind"];
  by: AlarmActor;
  at: string;
  note: string;
  /** For an assignment: who it went to (null: unassigned). */
  assignee?: AlarmActor | null;
  status: AlarmStatus;
};

export type AlarmMove = { ok: true; life: AlarmLife; change: AlarmChange } | { ok: false; message: string };

export function isOpen(status: AlarmStatus): boolean {
  return status !== "CLEARED";
}

/** A new alarm, raised by `by` at `at`. */
export function raiseAlarm(by: AlarmActor, at: string): { life: AlarmLife; change: AlarmChange } {
  return {
    life: {
      status: "ACTIVE",
      occurrences: 1,
      raised_at: at,
      updated_at: at,
      last_occurred_at: at,
      acknowledged: null,
      assignee: null,
      cleared: null,
    },
    change: { action: "raise", by, at, note: "", status: "ACTIVE" },
  };
}

/** Applies `action` by `by` at `at` when the lifecycle allows it. */
export function moveAlarm(life: AlarmLife, action: AlarmAction, by: AlarmActor, at: string): AlarmMove {
  const refused = refusal(life.status, action);
  if (refused) return { ok: false, message: refused };
  const next = nextLife(life, action, by, at);
  const change: AlarmChange = {
    action: action.kind,
    by,
    at,
    note: "note" in action ? action.note : "",
    ...(action.kind === "assign" ? { assignee: action.assignee } : {}),
    status: next.status,
  };
  return { ok: true, life: next, change };
}

function refusal(status: AlarmStatus, action: AlarmAction): string | undefined {
  if (status === "CLEARED") return `A CLEARED alarm is final: it cannot ${action.kind}`;
  if (action.kind === "acknowledge" && status === "ACKNOWLEDGED") return "The alarm is already ACKNOWLEDGED";
  return undefined;
}

function nextLife(life: AlarmLife, action: AlarmAction, by: AlarmActor, at: string): AlarmLife {
  const touched = { ...life, updated_at: at };
  switch (action.kind) {
    case "occur":
      return { ...touched, occurrences: life.occurrences + 1, last_occurred_at: at };
    case "acknowledge":
      return { ...touched, status: "ACKNOWLEDGED", acknowledged: { by, at, note: action.note } };
    case "assign":
      return { ...touched, assignee: action.assignee };
    case "clear":
      return { ...touched, status: "CLEARED", cleared: { by, at, note: action.note } };
  }
}
