import { useEffect, useState } from "preact/hooks";
import { ActionDialog } from "./action-dialog.tsx";
import { Alert, messageOf } from "./alert.tsx";
import { ApiError } from "./api.ts";
import { type ConsoleRider, getRider, revokeRiderTokens } from "./riders-api.ts";
import { Link, navigate } from "./router.tsx";
import { ListTable } from "./table-part.tsx";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";

/** The form that looks a rider up by the service's id (the spec's service_user_id). */
function RiderLookup({ initial = "" }: { initial?: string }) {
  function lookUp(event: Event) {
    event.preventDefault();
    const id = String(new FormData(event.currentTarget as HTMLFormElement).get("rider_id") ?? "").trim();
    if (id) navigate(`/console/riders/${encodeURIComponent(id)}`);
  }
  return (
    <form class="filters" onSubmit={lookUp}>
      <label>
        Rider id
        <input
          name="rider_id"
          defaultValue={initial}
          placeholder="service_user_id"
          required
          maxLength={100}
        />
      </label>
      <button type="submit">Look up</button>
    </form>
  );
}

/** `/console/riders`: where a rider is looked up by id. */
export function RidersView(_: ViewProps) {
  return (
    <section>
      <h1>Riders</h1>
      <p>A rider is found by the service's id of them (service_user_id), as sessions name them.</p>
      <RiderLookup />
    </section>
  );
}

/** `/console/riders/:id`: a rider, their sessions and live tokens, and revoking those tokens. */
export function RiderView({ params, staff }: ViewProps) {
  const id = params.id as string;
  const [rider, setRider] = useState<ConsoleRider | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [confirming, setConfirming] = useState(false);
  const [done, setDone] = useState<string | null>(null);

  const load = () =>
    getRider(id).then(
      (r) => {
        setRider(r);
        setError(null);
      },
      (e: unknown) => {
        setRider(null);
        setError(e instanceof ApiError && e.status === 404 ? `No rider with id ${id}` : messageOf(e));
      },
    );
  useEffect(() => {
    setRider(null);
    setDone(null);
    void load();
  }, [id]);

  return (
    <section>
      <h1>Rider</h1>
      <RiderLookup initial={id} />
      <Alert error={error} />
      {!rider && !error && <p aria-busy="true">Loading…</p>}
      {rider && (
        <>
          <RiderFacts rider={rider} />
          {done && <p role="status">{done}</p>}
          {staff.role !== "viewer" && (
            <div class="actions">
              <button type="button" onClick={() => setConfirming(true)}>
                Revoke tokens
              </button>
            </div>
          )}
          <RiderTokens rider={rider} />
          <RiderSessions rider={rider} />
        </>
      )}
      {rider && confirming && (
        <RevokeDialog
          rider={rider}
          onRevoked={setDone}
          onClose={() => setConfirming(false)}
          onDone={() => {
            setConfirming(false);
            void load();
          }}
        />
      )}
    </section>
  );
}

function RiderFacts({ rider }: { rider: ConsoleRider }) {
  return (
    <dl class="facts">
      <dt>Id</dt>
      <dd data-testid="rider-id">{rider.id}</dd>
      <dt>Integrator's user id</dt>
      <dd data-testid="rider-user-id">{rider.user_id}</dd>
      <dt>Status</dt>
      <dd>{rider.status}</dd>
      <dt>Phone number</dt>
      <dd>{rider.phone_number ?? "—"}</dd>
      <dt>Created</dt>
      <dd>
        <When at={rider.created_at} />
      </dd>
    </dl>
  );
}

function RiderTokens({ rider }: { rider: ConsoleRider }) {
  const n = rider.tokens.length;
  return (
    <>
      <h2>Tokens</h2>
      <p data-testid="token-count">
        {n} live refresh token{n === 1 ? "" : "s"}
      </p>
      {n > 0 && (
        <ul>
          {rider.tokens.map((t) => (
            <li key={t.id}>
              issued <When at={t.created_at} />, last used <When at={t.last_used_at} />, expires{" "}
              <When at={t.expires_at} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

function RiderSessions({ rider }: { rider: ConsoleRider }) {
  return (
    <>
      <h2>Sessions</h2>
      <ListTable
        rows={rider.sessions}
        empty="No sessions."
        head={
          <>
            <th>Session</th>
            <th>Status</th>
            <th>Device</th>
            <th>Start</th>
            <th>Fee</th>
          </>
        }
        row={(s) => (
          <tr key={s.id}>
            <td>
              <Link href={`/console/sessions/${s.id}`}>{s.id.slice(0, 8)}</Link>
            </td>
            <td>{s.status}</td>
            <td>
              <Link href={`/console/devices/${s.device_id}`}>{s.device_id.slice(0, 8)}</Link>
            </td>
            <td>
              <When at={s.start_time ?? s.booked_time} />
            </td>
            <td>{s.fee ? `${s.fee.currency} ${s.fee.value}` : "—"}</td>
          </tr>
        )}
      />
      {rider.more_sessions && (
        <p>
          <Link href={`/console/sessions?user_id=${encodeURIComponent(rider.id)}`}>
            Every session of this rider
          </Link>
        </p>
      )}
    </>
  );
}

/** Asks for a reason, then revokes the rider's tokens. */
function RevokeDialog(props: {
  rider: ConsoleRider;
  onRevoked: (said: string) => void;
  onClose: () => void;
  onDone: () => void;
}) {
  return (
    <ActionDialog
      title="Revoke tokens"
      act={async (form) => {
        const r = await revokeRiderTokens(props.rider.id, String(form.get("reason") ?? ""));
        const n = r.refresh_tokens_revoked;
        props.onRevoked(`Revoked: ${n} refresh token${n === 1 ? "" : "s"} and every access token.`);
      }}
      onClose={props.onClose}
      onDone={props.onDone}
    >
      <p>The rider's apps must sign in again.</p>
      <label>
        Reason
        <textarea name="reason" required maxLength={2000} rows={3} />
      </label>
    </ActionDialog>
  );
}
