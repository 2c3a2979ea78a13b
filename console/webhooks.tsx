import { useEffect, useState } from "preact/hooks";
import { ActionDialog } from "./action-dialog.tsx";
import { Alert, messageOf } from "./alert.tsx";
import { ApiError } from "./api.ts";
import { Link } from "./router.tsx";
import { ListTable } from "./table-part.tsx";
import type { ViewProps } from "./view-props.ts";
import {
  type ConsoleWebhookDelivery,
  type ConsoleWebhookEndpoint,
  type ConsoleWebhookLog,
  getWebhookLog,
  listWebhooks,
  replayDelivery,
  sendTestEvent,
} from "./webhooks-api.ts";
import { When } from "./when.tsx";

/** An attempt's outcome: the receiver's HTTP status, or what went wrong without an answer. */
const outcomeOf = (a: { status_code: number | null; error: string | null }) =>
  a.status_code !== null ? `HTTP ${a.status_code}` : (a.error ?? "—");

function LastAttempt({ endpoint }: { endpoint: ConsoleWebhookEndpoint }) {
  const a = endpoint.last_attempt;
  return a ? (
    <span>
      {outcomeOf(a)} at <When at={a.at} />
    </span>
  ) : (
    <span>none yet</span>
  );
}

const stateOf = (e: ConsoleWebhookEndpoint) =>
  e.enabled ? "enabled" : `disabled${e.disabled_reason ? ` (${e.disabled_reason})` : ""}`;

/** `/console/webhooks`: the operator's endpoints, what they subscribe to, and how the last attempt went. */
export function WebhooksView(_: ViewProps) {
  const [list, setList] = useState<ConsoleWebhookEndpoint[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    listWebhooks().then(
      (l) => setList(l.data),
      (e: unknown) => setError(messageOf(e)),
    );
  }, []);
  return (
    <section>
      <h1>Webhooks</h1>
      <Alert error={error} />
      <ListTable
        rows={list}
        error={error}
        empty="No webhook endpoints (the site manifest declares them)."
        head={
          <>
            <th>URL</th>
            <th>Events</th>
            <th>State</th>
            <th>Last delivery</th>
          </>
        }
        row={(e) => (
          <tr key={e.id}>
            <td class="wrap">
              <Link href={`/console/webhooks/${e.id}`}>{e.url}</Link>
            </td>
            <td>{e.types.join(", ")}</td>
            <td>{stateOf(e)}</td>
            <td>
              <LastAttempt endpoint={e} />
            </td>
          </tr>
        )}
      />
    </section>
  );
}

/** What a confirmation dialog is about to do. */
type Pending = { kind: "test" } | { kind: "replay"; delivery: ConsoleWebhookDelivery };

/** `/console/webhooks/:id`: an endpoint's delivery log with every attempt; a replay and a test event. */
export function WebhookView({ params, staff }: ViewProps) {
  const id = params.id as string;
  // The cursors of the pages before this one, and this one's (undefined: the newest).
  const [pages, setPages] = useState<(string | undefined)[]>([undefined]);
  const [log, setLog] = useState<ConsoleWebhookLog | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [pending, setPending] = useState<Pending | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const mayAct = staff.role !== "viewer";
  const cursor = pages.at(-1);

  const load = () =>
    getWebhookLog(id, cursor).then(
      (l) => {
        setLog(l);
        setError(null);
      },
      (e: unknown) =>
        setError(
          e instanceof ApiError && e.status === 404 ? `No webhook endpoint with id ${id}` : messageOf(e),
        ),
    );
  useEffect(() => {
    void load();
  }, [id, cursor]);

  const endpoint = log?.endpoint;
  return (
    <section>
      <h1>Webhook endpoint</h1>
      <Alert error={error} />
      {!log && !error && <p aria-busy="true">Loading…</p>}
      {endpoint && <EndpointFacts endpoint={endpoint} />}
      {done && <p role="status">{done}</p>}
      <div class="actions">
        {mayAct && endpoint?.enabled && (
          <button type="button" onClick={() => setPending({ kind: "test" })}>
            Send test event
          </button>
        )}
        <button type="button" onClick={() => void load()}>
          Refresh
        </button>
      </div>
      {log && (
        <Deliveries log={log} mayAct={mayAct} onReplay={(d) => setPending({ kind: "replay", delivery: d })} />
      )}
      <p class="paging">
        {pages.length > 1 && (
          <button type="button" onClick={() => setPages(pages.slice(0, -1))}>
            Newer
          </button>
        )}
        {log?.next_cursor && (
          <button type="button" onClick={() => setPages([...pages, log.next_cursor ?? undefined])}>
            Older
          </button>
        )}
      </p>
      {pending && (
        <QueueDialog
          endpointId={id}
          pending={pending}
          onQueued={(messageId) => setDone(`Queued ${messageId}.`)}
          onClose={() => setPending(null)}
          onDone={() => {
            setPending(null);
            if (pages.length > 1) setPages([undefined]);
            else void load();
          }}
        />
      )}
    </section>
  );
}

function Deliveries(props: {
  log: ConsoleWebhookLog;
  mayAct: boolean;
  onReplay: (d: ConsoleWebhookDelivery) => void;
}) {
  if (props.log.deliveries.length === 0) return <p>No deliveries.</p>;
  return (
    <ol class="deliveries">
      {props.log.deliveries.map((d) => (
        <li key={d.id} data-testid="delivery">
          <h2>
            {d.type} · <span data-testid="delivery-status">{d.status}</span>
          </h2>
          <p class="wrap">
            Message {d.id}; event {d.event_ids.join(", ")}; made <When at={d.created_at} />
            {d.last_error ? `; last error: ${d.last_error}` : ""}
          </p>
          {d.attempts.length === 0 ? (
            <p>No attempt yet.</p>
          ) : (
            <div class="scroll">
              <table>
                <caption>Attempts of {d.id}</caption>
                <thead>
                  <tr>
                    <th>#</th>
                    <th>Time</th>
                    <th>Outcome</th>
                    <th>Duration</th>
                  </tr>
                </thead>
                <tbody>
                  {d.attempts.map((a) => (
                    <tr key={`${a.attempt}-${a.at}`}>
                      <td>{a.attempt}</td>
                      <td>
                        <When at={a.at} />
                      </td>
                      <td>{outcomeOf(a)}</td>
                      <td>{a.duration_ms} ms</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {props.mayAct && d.status !== "pending" && (
            <button type="button" aria-label={`Replay ${d.id}`} onClick={() => props.onReplay(d)}>
              Replay
            </button>
          )}
        </li>
      ))}
    </ol>
  );
}

function EndpointFacts({ endpoint }: { endpoint: ConsoleWebhookEndpoint }) {
  return (
    <dl class="facts">
      <dt>URL</dt>
      <dd class="wrap" data-testid="endpoint-url">
        {endpoint.url}
      </dd>
      <dt>Events</dt>
      <dd>{endpoint.types.join(", ")}</dd>
      <dt>Delivery</dt>
      <dd>{endpoint.delivery}</dd>
      <dt>State</dt>
      <dd>{stateOf(endpoint)}</dd>
      <dt>Last delivery</dt>
      <dd>
        <LastAttempt endpoint={endpoint} />
      </dd>
    </dl>
  );
}

/** Asks before a replay or a test event, then queues it. */
function QueueDialog(props: {
  endpointId: string;
  pending: Pending;
  onQueued: (messageId: string) => void;
  onClose: () => void;
  onDone: () => void;
}) {
  const { pending } = props;
  return (
    <ActionDialog
      title={pending.kind === "test" ? "Send test event" : "Replay delivery"}
      act={async () => {
        const queued =
          pending.kind === "test"
            ? await sendTestEvent(props.endpointId)
            : await replayDelivery(props.endpointId, pending.delivery.id);
        props.onQueued(queued.message_id);
      }}
      onClose={props.onClose}
      onDone={props.onDone}
    >
      <p>
        {pending.kind === "test"
          ? "A message of type test goes to this endpoint through its queue."
          : `Delivery ${pending.delivery.id} is sent again under the same id, so the receiver can tell it has it.`}
      </p>
    </ActionDialog>
  );
}
