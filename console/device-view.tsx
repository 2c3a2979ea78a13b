import { useEffect, useRef, useState } from "preact/hooks";
import { Alert } from "./alert.tsx";
import { countdown } from "./countdown.ts";
import {
  type Command,
  type ConsoleCommand,
  type ConsoleCommandName,
  type DevicePage,
  FORCE_UNLOCK_REASONS,
  followCommand,
  getDevicePage,
  REASONS_NEEDING_COMMENT,
  sendCommand,
  type TimelineEntry,
} from "./device-api.ts";
import { closing } from "./dialog-close.ts";
import { cloudNow, useLive, useSecondTick } from "./live.ts";
import { Link } from "./router.tsx";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";

/** The operator functions the page offers, by the names on their buttons. */
const ACTIONS: { command: ConsoleCommandName; label: string }[] = [
  { command: "force-unlock", label: "Force unlock" },
  { command: "force-lock", label: "Force lock" },
  { command: "force-cancel-booking", label: "Force cancel booking" },
  { command: "sync-device", label: "Sync device" },
];
const labelOf = (name: string) => ACTIONS.find((a) => a.command === name)?.label ?? name;
const ENDED = new Set(["SUCCESS", "ERROR"]);

/**
 * One device: its live state, the operator functions (not for a viewer; the cloud refuses a viewer anyway),
 * and one timeline of what happened to it. The state is read again once a command ends.
 */
export function DeviceView({ params, staff }: ViewProps) {
  const id = params.id ?? "";
  const [page, setPage] = useState<DevicePage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asking, setAsking] = useState<ConsoleCommandName | null>(null);
  const [followed, setFollowed] = useState<Command | null>(null);

  const load = () =>
    getDevicePage(id).then(
      (p) => {
        setPage(p);
        setError(null);
      },
      (e: unknown) => setError(String(e instanceof Error ? e.message : e)),
    );
  useEffect(() => {
    setPage(null);
    void load();
  }, [id]);
  // Its location's version moves with every change of the device; its commands move on their own.
  const locationId = page?.device.location.id;
  useLive(locationId ? [`location:${locationId}`, "commands"] : ["commands"], load);

  /** Follows the command until it ends (each read waits on the cloud), then shows the device as it is now. */
  async function follow(command: Command) {
    setFollowed(command);
    let current = command;
    while (!ENDED.has(current.state.value)) {
      current = await followCommand(current.id, 10);
      setFollowed(current);
    }
    await load();
  }

  async function confirm(body: ConsoleCommand) {
    setAsking(null);
    try {
      await follow(await sendCommand(id, body));
    } catch (e) {
      setError(String(e instanceof Error ? e.message : e));
    }
  }

  if (!page) return error ? <Alert error={error} /> : <p aria-busy="true">Loading…</p>;
  const { device } = page;
  return (
    <section>
      <h1>Device {device.alias}</h1>
      <p>
        <Link href={`/console/locations/${encodeURIComponent(device.location.id)}`}>Its location</Link>
      </p>
      <dl class="facts" aria-label="Live state">
        <dt>State</dt>
        <dd data-testid="device-state">{device.state.value}</dd>
        <dt>Since</dt>
        <dd>{device.state.changed_at}</dd>
        {device.state.timeout_at && (
          <>
            <dt>Times out at</dt>
            <dd>
              <Deadline at={device.state.timeout_at} />
            </dd>
          </>
        )}
        <dt>Lock</dt>
        <dd>{device.lock_state}</dd>
        <dt>Health</dt>
        <dd>{device.heartbeat_v2?.health ?? "unknown"}</dd>
        <dt>Hardware</dt>
        <dd>{device.hardware_state}</dd>
        <dt>Sleep</dt>
        <dd>{device.sleep_state || "awake"}</dd>
        {device.user?.id && (
          <>
            <dt>Occupant</dt>
            <dd>{device.user.id}</dd>
          </>
        )}
      </dl>
      <Alert error={error} />
      {staff.role !== "viewer" && (
        <div class="actions">
          {ACTIONS.map((a) => (
            <button key={a.command} type="button" onClick={() => setAsking(a.command)}>
              {a.label}
            </button>
          ))}
        </div>
      )}
      {followed && (
        <p role="status" data-testid="command-status">
          {labelOf(followed.name)}: <strong>{followed.state.value}</strong>
          {followed.state.reason && ` (${followed.state.reason})`}
        </p>
      )}
      {asking && <CommandDialog command={asking} onConfirm={confirm} onCancel={() => setAsking(null)} />}
      <h2>Timeline</h2>
      <Timeline entries={page.timeline} />
    </section>
  );
}

/** The deadline and, once the cloud's time is known, the time left to it, ticking. */
function Deadline({ at }: { at: string }) {
  useSecondTick();
  const now = cloudNow();
  return (
    <>
      <time dateTime={at}>{at}</time>
      {now !== null && (
        <>
          {" "}
          (<span class="countdown">{countdown(at, now)}</span>)
        </>
      )}
    </>
  );
}

/** Asks for what the spec requires of the command (a reason and, for some reasons, a comment), then Confirm. */
function CommandDialog({
  command,
  onConfirm,
  onCancel,
}: {
  command: ConsoleCommandName;
  onConfirm: (body: ConsoleCommand) => void;
  onCancel: () => void;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  const [reason, setReason] = useState("");
  const [comment, setComment] = useState("");
  const [powerCycle, setPowerCycle] = useState(false);
  useEffect(() => ref.current?.showModal(), []);
  const unlock = command === "force-unlock";
  const needsComment = unlock && REASONS_NEEDING_COMMENT.has(reason);

  function submit(e: Event) {
    e.preventDefault();
    const body: ConsoleCommand = { command };
    // One of FORCE_UNLOCK_REASONS: the select offers only those and is required (the cloud checks it again).
    if (unlock) body.reason = reason as ConsoleCommand["reason"];
    if (unlock && comment.trim()) body.comment = comment.trim();
    if (command === "sync-device") body.power_cycle = powerCycle;
    // Closed before it goes, so the browser gives the focus back to the button that opened it.
    ref.current?.close();
    onConfirm(body);
  }

  return (
    <dialog ref={ref} aria-labelledby="command-title" {...closing(onCancel)}>
      <form onSubmit={submit}>
        <h2 id="command-title">{labelOf(command)}</h2>
        {unlock && (
          <>
            <label>
              Reason
              <select required value={reason} onChange={(e) => setReason(e.currentTarget.value)}>
                <option value="">Choose a reason</option>
                {FORCE_UNLOCK_REASONS.map((r) => (
                  <option key={r} value={r}>
                    {r}
                  </option>
                ))}
              </select>
            </label>
            <label>
              Comment{needsComment ? " (required, at least 5 characters)" : " (optional)"}
              <textarea
                required={needsComment}
                minLength={needsComment ? 5 : undefined}
                maxLength={1000}
                value={comment}
                onInput={(e) => setComment(e.currentTarget.value)}
              />
            </label>
          </>
        )}
        {command === "sync-device" && (
          <label class="inline">
            <input
              type="checkbox"
              checked={powerCycle}
              onChange={(e) => setPowerCycle(e.currentTarget.checked)}
            />
            Power cycle
          </label>
        )}
        <div class="actions">
          <button type="submit">Confirm</button>
          <button type="button" onClick={() => ref.current?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/** What one timeline entry says, in words; every string from the cloud is rendered as text. */
function describe(e: TimelineEntry): { what: string; detail: string } {
  switch (e.kind) {
    case "command":
      return {
        what: `Command ${e.name}: ${e.state.value}`,
        detail: [
          `by ${e.requested_by}`,
          e.reason && `reason ${e.reason}`,
          e.comment && `“${e.comment}”`,
          e.events.map((ev) => ev.name).join(" → "),
          e.state.reason,
        ]
          .filter(Boolean)
          .join(" · "),
      };
    case "state_change":
      return {
        what: `State ${e.from} → ${e.to}`,
        detail: [`lock ${e.lock_state}`, e.cause, e.detail].filter(Boolean).join(" · "),
      };
    case "audit":
      return {
        what: `${e.action} by ${e.actor.kind} ${e.actor.email ?? e.actor.id}`,
        detail: [e.reason && `reason ${e.reason}`, e.comment && `“${e.comment}”`].filter(Boolean).join(" · "),
      };
    case "session":
      return {
        what: `Session ${e.status}`,
        detail: [
          e.user_id ? `rider ${e.user_id}` : e.access_key_id && `card ${e.access_key_id}`,
          e.start_time && `from ${e.start_time}`,
          e.end_time && `to ${e.end_time}`,
          e.ended_by && `ended by ${e.ended_by}`,
        ]
          .filter(Boolean)
          .join(" · "),
      };
    case "access":
      return {
        what: `Card ${e.card_id} ${e.granted ? "granted" : "refused"} (${e.action})`,
        detail: [`reader ${e.reader}`, e.reason, `decided by ${e.decided_by}`].filter(Boolean).join(" · "),
      };
  }
}

function Timeline({ entries }: { entries: TimelineEntry[] }) {
  if (entries.length === 0) return <p>Nothing has happened at this device yet.</p>;
  return (
    <div class="scroll">
      <table aria-label="Timeline">
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">What</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {entries.map((e, i) => {
            const { what, detail } = describe(e);
            return (
              <tr key={i}>
                <td>
                  <When at={e.at} />
                </td>
                <td>{what}</td>
                <td>{detail}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </div>
  );
}
