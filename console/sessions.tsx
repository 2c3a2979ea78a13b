import { useEffect, useState } from "preact/hooks";
import { PAYMENT_TRANSITIONS, type PaymentStatus } from "../shared/domain/payment-machine.ts";
import { ActionDialog } from "./action-dialog.tsx";
import { Alert, Awaiting, messageOf } from "./alert.tsx";
import { useLive } from "./live.ts";
import { Link } from "./router.tsx";
import {
  type ConsoleSession,
  type ConsoleSessionList,
  endSession,
  getSession,
  listSessions,
  markPayment,
  queryOf,
} from "./sessions-api.ts";
import { ListTable } from "./table-part.tsx";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";

const FILTERS = ["status", "device_id", "user_id"] as const;
const STATUSES = { active: "Active", booked: "Booked", ended: "Ended" };
type Filters = Partial<Record<(typeof FILTERS)[number], string>>;

const feeOf = (s: ConsoleSession) => (s.fee ? `${s.fee.currency} ${s.fee.value}` : "—");

/** The filters the address carries, so a filtered list is a deep link too. */
function filtersOfAddress(): Filters {
  const q = new URLSearchParams(location.search);
  return Object.fromEntries(FILTERS.flatMap((k) => (q.get(k) ? [[k, q.get(k) as string]] : [])));
}

/** `/console/sessions`: the operator's sessions, newest first, by status, device and rider. */
export function SessionsView(_: ViewProps) {
  const [filters, setFilters] = useState<Filters>(filtersOfAddress);
  // The page tokens of the pages before this one, and this one's (undefined: the newest).
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const [list, setList] = useState<ConsoleSessionList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const token = pages.at(-1);

  useEffect(() => {
    setError(null);
    listSessions({ ...filters, limit: "50", pagination_token: token }).then(setList, (e: unknown) =>
      setError(messageOf(e)),
    );
  }, [filters, token]);
  useLive(["sessions"], () =>
    listSessions({ ...filters, limit: "50", pagination_token: token }).then(setList),
  );

  function apply(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    const next: Filters = Object.fromEntries(FILTERS.map((k) => [k, String(form.get(k) ?? "").trim()]));
    history.replaceState(null, "", `${location.pathname}${queryOf(next)}`);
    setFilters(next);
    setPages([undefined]);
  }

  return (
    <section>
      <h1>Sessions</h1>
      {/* Uncontrolled (read on submit): a live refresh never resets a filter being typed. */}
      <form class="filters" onSubmit={apply}>
        <label>
          Status
          <select name="status">
            <option value="">Any</option>
            {Object.entries(STATUSES).map(([value, text]) => (
              <option key={value} value={value} selected={filters.status === value}>
                {text}
              </option>
            ))}
          </select>
        </label>
        <label>
          Device
          <input name="device_id" defaultValue={filters.device_id ?? ""} placeholder="device id" />
        </label>
        <label>
          Rider
          <input name="user_id" defaultValue={filters.user_id ?? ""} placeholder="user id" />
        </label>
        <button type="submit">Filter</button>
      </form>
      <Alert error={error} />
      <ListTable
        rows={list?.data}
        error={error}
        empty="No sessions."
        head={
          <>
            <th>Session</th>
            <th>Status</th>
            <th>Rider</th>
            <th>Device</th>
            <th>Start</th>
            <th>End</th>
            <th>Fee</th>
            <th>Payment</th>
          </>
        }
        row={(s) => (
          <tr key={s.id}>
            <td>
              <Link href={`/console/sessions/${s.id}`}>{s.id.slice(0, 8)}</Link>
            </td>
            <td>{s.status}</td>
            <td>{s.user_id || "card"}</td>
            <td>
              <Link href={`/console/devices/${s.device_id}`}>{s.device_id.slice(0, 8)}</Link>
            </td>
            <td>
              <When at={s.start_time ?? s.booked_time} />
            </td>
            <td>
              <When at={s.end_time} />
            </td>
            <td>{feeOf(s)}</td>
            <td>{s.payment?.status ?? "—"}</td>
          </tr>
        )}
      />
      <p class="paging">
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Newer
          </button>
        )}
        {list?.pagination_token && (
          <button type="button" onClick={() => setPages([...pages, list.pagination_token ?? undefined])}>
            Older
          </button>
        )}
      </p>
    </section>
  );
}

/** What a confirmation dialog is about to do. */
type Pending = { kind: "end" } | { kind: "payment"; to: PaymentStatus };

/** `/console/sessions/:id`: one session with its fee and payment, and what an operator may do to them. */
export function SessionView({ params, staff }: ViewProps) {
  const id = params.id as string;
  const [session, setSession] = useState<ConsoleSession | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const mayAct = staff.role !== "viewer";

  const load = () =>
    getSession(id).then(
      (s) => {
        setSession(s);
        setError(null);
      },
      (e: unknown) => setError(messageOf(e)),
    );
  useEffect(() => {
    void load();
  }, [id]);
  useLive(["sessions"], load);

  if (!session) return <Awaiting title="Session" error={error} />;

  const open = session.status === "active" || session.status === "booked";
  const moves = session.payment ? PAYMENT_TRANSITIONS[session.payment.status] : [];
  return (
    <section>
      <h1>Session {session.id.slice(0, 8)}</h1>
      <dl class="facts">
        <dt>Status</dt>
        <dd data-testid="session-status">{session.status}</dd>
        <dt>Rider</dt>
        <dd>{session.user_id || "card"}</dd>
        <dt>Device</dt>
        <dd>
          <Link href={`/console/devices/${session.device_id}`}>{session.device_id}</Link>
        </dd>
        <dt>Booked</dt>
        <dd>
          <When at={session.booked_time} />
        </dd>
        <dt>Start</dt>
        <dd>
          <When at={session.start_time} />
        </dd>
        <dt>End</dt>
        <dd>
          <When at={session.end_time} />
        </dd>
        <dt>Fee</dt>
        <dd>{feeOf(session)}</dd>
        <dt>Payment</dt>
        <dd data-testid="payment-status">{session.payment?.status ?? "none until the session ends"}</dd>
      </dl>
      <Alert error={error} />
      {mayAct && (open || moves.length > 0) && (
        <div class="actions">
          {open && (
            <button type="button" onClick={() => setPending({ kind: "end" })}>
              End session
            </button>
          )}
          {moves.map((to) => (
            <button key={to} type="button" onClick={() => setPending({ kind: "payment", to })}>
              Mark payment {to}
            </button>
          ))}
        </div>
      )}
      <p>
        <Link href={`/console/audit${queryOf({ subject_type: "session", subject_id: session.id })}`}>
          This session in the audit log
        </Link>
      </p>
      {pending && (
        <SessionDialog
          pending={pending}
          onClose={() => setPending(null)}
          onDone={() => {
            setPending(null);
            void load();
          }}
          act={(withoutFee, reason) =>
            pending.kind === "end"
              ? endSession(session.id, withoutFee, reason)
              : markPayment(session.payment?.id ?? "", pending.to)
          }
        />
      )}
    </section>
  );
}

/** Asks before ending the session (with or without its fee, for a reason) or moving its payment. */
function SessionDialog(props: {
  pending: Pending;
  act: (withoutFee: boolean, reason: string) => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}) {
  const ending = props.pending.kind === "end";
  const title = ending
    ? "End session"
    : `Mark payment ${props.pending.kind === "payment" && props.pending.to}`;
  return (
    <ActionDialog
      title={title}
      act={(form) => props.act(form.get("without_fee") === "on", String(form.get("reason") ?? ""))}
      onClose={props.onClose}
      onDone={props.onDone}
    >
      {ending && (
        <>
          <label class="check">
            <input type="checkbox" name="without_fee" /> Without fee
          </label>
          <label>
            Reason
            <textarea name="reason" maxLength={2000} rows={3} />
          </label>
        </>
      )}
    </ActionDialog>
  );
}
