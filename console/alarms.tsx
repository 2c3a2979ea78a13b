import { useEffect, useRef, useState } from "preact/hooks";
import {
  type Alarm,
  type AlarmAction,
  type AlarmChange,
  type AlarmFilters,
  actOnAlarm,
  actorName,
  alarmHistory,
  listAlarms,
  SEVERITIES,
  STATUSES,
  type StaffNames,
} from "./alarms-api.ts";
import { Alert } from "./alert.tsx";
import type { Staff } from "./api.ts";
import { closing } from "./dialog-close.ts";
import { useLive } from "./live.ts";
import { Link } from "./router.tsx";
import { When } from "./when.tsx";

const FILTERS = ["status", "severity", "location", "device", "operator_id"] as const;

/** The filters the address holds, so a filtered inbox is a deep link too. */
function filtersOf(search: string): AlarmFilters {
  const q = new URLSearchParams(search);
  return Object.fromEntries(FILTERS.map((f) => [f, q.get(f) ?? ""])) as AlarmFilters;
}

/**
 * The alarm inbox: the operator's alarms, filtered, each linked to its device (or its location when it is
 * about no device), with its history; staff who may act acknowledge, assign and clear them in a dialog.
 */
export function AlarmsView({ staff }: { staff: Staff }) {
  const [filters, setFilters] = useState(() => filtersOf(location.search));
  const [inbox, setInbox] = useState<{ data: Alarm[]; staff: StaffNames } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [acting, setActing] = useState<{ alarm: Alarm; action: AlarmAction } | null>(null);
  const [shown, setShown] = useState<string | null>(null);
  const [version, setVersion] = useState(0);
  const mayAct = staff.role !== "viewer";

  useEffect(() => {
    listAlarms(filters).then(
      (r) => {
        setInbox(r);
        setError(null);
      },
      (e: unknown) => setError(e instanceof Error ? e.message : String(e)),
    );
  }, [filters, version]);
  // An open history reads again too: its alarm is a new object after the list is read.
  useLive(["alarms"], () => listAlarms(filters).then(setInbox));

  function applyFilters(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next = Object.fromEntries(
      FILTERS.map((f) => [f, String(form.get(f) ?? "").trim()]),
    ) as AlarmFilters;
    const q = new URLSearchParams(Object.entries(next).filter(([, v]) => v !== ""));
    history.replaceState(null, "", `${location.pathname}${q.size ? `?${q}` : ""}`);
    setFilters(next);
  }

  return (
    <section>
      <h1>Alarms</h1>
      {/* Uncontrolled (read on submit): a live refresh never resets a filter being typed. */}
      <form class="filters" onSubmit={applyFilters} aria-label="Filters">
        <label>
          Status
          <select name="status">
            <option value="">Open and cleared</option>
            <option value="ACTIVE,ACKNOWLEDGED" selected={filters.status === "ACTIVE,ACKNOWLEDGED"}>
              Open
            </option>
            {STATUSES.map((s) => (
              <option key={s} value={s} selected={filters.status === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Severity
          <select name="severity">
            <option value="">Any</option>
            {SEVERITIES.map((s) => (
              <option key={s} value={s} selected={filters.severity === s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <label>
          Location
          <input name="location" defaultValue={filters.location} placeholder="location id" />
        </label>
        <label>
          Device
          <input name="device" defaultValue={filters.device} placeholder="device id" />
        </label>
        {staff.operator_id === null && (
          <label>
            Operator
            <input name="operator_id" defaultValue={filters.operator_id} placeholder="operator id" required />
          </label>
        )}
        <button type="submit">Filter</button>
      </form>
      <Alert error={error} />
      {inbox === null && !error && <p aria-busy="true">Loading…</p>}
      {inbox && inbox.data.length === 0 && <p>No alarms.</p>}
      {inbox && inbox.data.length > 0 && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th scope="col">Severity</th>
                <th scope="col">Kind</th>
                <th scope="col">Subject</th>
                <th scope="col">Status</th>
                <th scope="col">Raised</th>
                <th scope="col">Count</th>
                <th scope="col">Assignee</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            {inbox.data.map((a) => (
              <tbody key={a.id} data-alarm={a.id}>
                <tr>
                  <td>{a.severity}</td>
                  <td>{a.kind.replaceAll("_", " ")}</td>
                  <td>
                    <Subject alarm={a} />
                  </td>
                  <td>{a.status}</td>
                  <td>
                    <When at={a.raised_at} />
                  </td>
                  <td>{a.occurrences}</td>
                  <td>{actorName(a.assignee, inbox.staff)}</td>
                  <td class="actions">
                    <button
                      type="button"
                      aria-expanded={shown === a.id}
                      onClick={() => setShown(shown === a.id ? null : a.id)}
                    >
                      History
                    </button>
                    {mayAct && a.status === "ACTIVE" && (
                      <button type="button" onClick={() => setActing({ alarm: a, action: "acknowledge" })}>
                        Acknowledge
                      </button>
                    )}
                    {mayAct && a.status !== "CLEARED" && (
                      <>
                        <button type="button" onClick={() => setActing({ alarm: a, action: "assign" })}>
                          Assign
                        </button>
                        <button type="button" onClick={() => setActing({ alarm: a, action: "clear" })}>
                          Clear
                        </button>
                      </>
                    )}
                  </td>
                </tr>
                {shown === a.id && (
                  <tr>
                    <td colSpan={8}>
                      <History alarm={a} version={version} />
                    </td>
                  </tr>
                )}
              </tbody>
            ))}
          </table>
        </div>
      )}
      {acting && (
        <ActionDialog
          {...acting}
          onDone={() => {
            setActing(null);
            setVersion((v) => v + 1);
          }}
          onCancel={() => setActing(null)}
        />
      )}
    </section>
  );
}

/** The alarm's device, or its location when it is about a gateway or the site itself. */
function Subject({ alarm }: { alarm: Alarm }) {
  const alias = typeof alarm.details.alias === "string" ? alarm.details.alias : null;
  if (alarm.device_id)
    return (
      <Link href={`/console/devices/${encodeURIComponent(alarm.device_id)}`}>
        {alias ? `Device ${alias}` : alarm.subject}
      </Link>
    );
  return <Link href={`/console/locations/${encodeURIComponent(alarm.location_id)}`}>{alarm.subject}</Link>;
}

/** Every change of one alarm, oldest first, with who made it and their note. */
function History({ alarm, version }: { alarm: Alarm; version: number }) {
  const [got, setGot] = useState<{ history: AlarmChange[]; staff: StaffNames } | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    alarmHistory(alarm).then(setGot, (e: unknown) => setError(e instanceof Error ? e.message : String(e)));
  }, [alarm, version]);
  if (error) return <p class="error">{error}</p>;
  if (!got) return <p aria-busy="true">Loading…</p>;
  return (
    <ol class="history" aria-label="History">
      {got.history.map((c) => (
        <li key={`${c.at} ${c.action}`}>
          <When at={c.at} /> {c.action} by {actorName(c.by, got.staff)}
          {c.action === "assign" && ` to ${actorName(c.assignee ?? null, got.staff) || "nobody"}`}
          {c.note && <q>{c.note}</q>} → {c.status}
        </li>
      ))}
    </ol>
  );
}

const TITLES: Record<AlarmAction, string> = { acknowledge: "Acknowledge", assign: "Assign", clear: "Clear" };

/** The confirmation of one action: a note (or the assignee's email), then Confirm. */
function ActionDialog({
  alarm,
  action,
  onDone,
  onCancel,
}: {
  alarm: Alarm;
  action: AlarmAction;
  onDone: () => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    ref.current?.showModal();
  }, []);

  async function confirm(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    try {
      await actOnAlarm(alarm, action, String(form.get("text") ?? ""));
      // Closed before it goes, so the browser gives the focus back to the button that opened it.
      ref.current?.close();
      onDone();
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      setBusy(false);
    }
  }

  const title = `${TITLES[action]} ${alarm.kind.replaceAll("_", " ")} on ${alarm.subject}`;
  return (
    <dialog ref={ref} aria-label={title} {...closing(onCancel)}>
      <form onSubmit={(e) => void confirm(e)}>
        <h2>{title}</h2>
        {action === "assign" ? (
          <label>
            Assignee
            <input name="text" type="email" placeholder="staff email (empty: nobody)" />
          </label>
        ) : (
          <label>
            Note
            <textarea name="text" maxLength={2000} rows={3} />
          </label>
        )}
        <Alert error={error} />
        <div class="buttons">
          <button type="submit" disabled={busy}>
            Confirm
          </button>
          <button type="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
