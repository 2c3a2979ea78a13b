import { useState } from "preact/hooks";
import type { ConsoleGatewaySync, ConsoleWhitelist } from "../shared/api/console-whitelists.ts";
import type { WhitelistEntity } from "../shared/api/whitelist.ts";
import { ActionDialog } from "./action-dialog.tsx";
import { Link } from "./router.tsx";
import { queryOf } from "./sessions-api.ts";
import { useLoad } from "./use-load.ts";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";
import { addCard, getWhitelist, listWhitelists, removeCard } from "./whitelists-api.ts";

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

function Alert({ error }: { error: string | null }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

/** `/console/whitelists`: the operator's whitelists (every operator's for a superadmin). */
export function WhitelistsView({ staff }: ViewProps) {
  const { data, error } = useLoad(listWhitelists, "");
  const everyone = staff.operator_id === null;
  return (
    <section>
      <h1>Whitelists</h1>
      <Alert error={error} />
      {!data && !error && <p aria-busy="true">Loading…</p>}
      {data && data.data.length === 0 && <p>No whitelists.</p>}
      {data && data.data.length > 0 && (
        <div class="scroll">
          <table>
            <thead>
              <tr>
                <th>Name</th>
                {everyone && <th>Operator</th>}
                <th>Cards</th>
                <th>Targets</th>
                <th>Key sync</th>
              </tr>
            </thead>
            <tbody>
              {data.data.map((w) => (
                <tr key={w.id}>
                  <td>
                    <Link href={`/console/whitelists/${w.id}`}>{w.name}</Link>
                  </td>
                  {everyone && <td>{w.operator_id}</td>}
                  <td>{w.cards}</td>
                  <td>
                    {plural(w.targets.locations, "location")}, {plural(w.targets.devices, "device")} (
                    {w.targets.keys_only} keys only)
                  </td>
                  <td>
                    {w.sync.gateways === 0
                      ? "no gateway"
                      : w.sync.pending === 0
                        ? `${plural(w.sync.gateways, "gateway")}, none pending`
                        : `${plural(w.sync.gateways, "gateway")}, ${w.sync.pending} pending`}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

/** What a dialog on the page is about to do. */
type Pending = { kind: "add" } | { kind: "remove"; card: string };

/** `/console/whitelists/:id`: its cards, its targets and how far each gateway serving them is in sync. */
export function WhitelistView({ params, staff }: ViewProps) {
  const id = params.id ?? "";
  const { data: wl, error, reload } = useLoad(() => getWhitelist(id), id);
  const [pending, setPending] = useState<Pending | null>(null);
  const mayAct = staff.role !== "viewer";

  if (!wl)
    return (
      <section>
        <h1>Whitelist</h1>
        <Alert error={error} />
        {!error && <p aria-busy="true">Loading…</p>}
      </section>
    );
  return (
    <section>
      <h1>{wl.name}</h1>
      {wl.description && <p>{wl.description}</p>}
      <Alert error={error} />
      <div class="actions">
        {mayAct && (
          <button type="button" onClick={() => setPending({ kind: "add" })}>
            Add card
          </button>
        )}
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      <Cards cards={wl.cards} mayAct={mayAct} onRemove={(card) => setPending({ kind: "remove", card })} />
      <p>
        <Link href={`/console/audit${queryOf({ subject_type: "whitelist", subject_id: wl.id })}`}>
          This whitelist in the audit log
        </Link>
      </p>
      <Targets wl={wl} />
      <KeySync wl={wl} />
      {pending && (
        <CardDialog
          whitelistId={wl.id}
          pending={pending}
          onClose={() => setPending(null)}
          onDone={() => {
            setPending(null);
            reload();
          }}
        />
      )}
    </section>
  );
}

/** The devices and locations the whitelist applies to, each linked to its page. */
function Targets({ wl }: { wl: ConsoleWhitelist }) {
  return (
    <>
      <h2>Targets</h2>
      {wl.targets.length === 0 ? (
        <p>No targets: the cards open nothing yet.</p>
      ) : (
        <ul aria-label="Targets">
          {wl.targets.map((t) => (
            <li key={`${t.type}/${t.id}`}>
              {t.type}{" "}
              <Link href={`/console/${t.type === "device" ? "devices" : "locations"}/${t.id}`}>
                {t.label ?? t.id}
              </Link>
              {t.keys_only ? " (keys only)" : ""}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** Each gateway serving a target, and how far its key set is behind the cloud's. */
function KeySync({ wl }: { wl: ConsoleWhitelist }) {
  return (
    <>
      <h2>Key sync</h2>
      {wl.gateways.length === 0 ? (
        <p>No gateway serves these targets.</p>
      ) : (
        <ul aria-label="Key sync">
          {wl.gateways.map((g) => (
            <li key={g.gateway_id} data-testid={`sync-${g.gateway_id}`}>
              <SyncState g={g} />
            </li>
          ))}
        </ul>
      )}
    </>
  );
}

/** The dialog of the pending action: the card's fields to add, or a confirmation to remove one. */
function CardDialog(props: {
  whitelistId: string;
  pending: Pending;
  onClose: () => void;
  onDone: () => void;
}) {
  const { whitelistId, pending, onClose, onDone } = props;
  if (pending.kind === "add")
    return <AddCardDialog act={(card) => addCard(whitelistId, card)} onClose={onClose} onDone={onDone} />;
  return (
    <ActionDialog
      title={`Remove card ${pending.card}`}
      act={() => removeCard(whitelistId, pending.card)}
      onClose={onClose}
      onDone={onDone}
    >
      <p>The gateways serving this whitelist's targets stop accepting it once they sync.</p>
    </ActionDialog>
  );
}

/** "in sync at version N", or "pending on gw-… since …" (docs/decisions/console.md). */
function SyncState({ g }: { g: ConsoleGatewaySync }) {
  const held = g.held_version === null ? "never reported" : `holds ${g.held_version}`;
  const note = g.keys_synced ? "" : " (no keys_only target here: cards are asked for on demand)";
  if (g.state === "in_sync")
    return (
      <>
        {g.gateway_id}: in sync at version {g.cloud_version}
        {note}
      </>
    );
  if (g.state === "not_reported")
    return (
      <>
        {g.gateway_id}: no keys yet, version never reported{note}
      </>
    );
  return (
    <>
      pending on {g.gateway_id} since{" "}
      {g.pending_since_exact ? (
        <When at={g.pending_since} />
      ) : (
        <>
          <When at={g.pending_since} /> or earlier
        </>
      )}{" "}
      (cloud version {g.cloud_version}, gateway {held}){note}
    </>
  );
}

function Cards(props: { cards: WhitelistEntity[]; mayAct: boolean; onRemove: (card: string) => void }) {
  return (
    <>
      <h2>Cards</h2>
      {props.cards.length === 0 ? (
        <p>No cards.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Cards">
            <thead>
              <tr>
                <th>Card</th>
                <th>Status</th>
                <th>Expires</th>
                <th>Master key</th>
                <th>Comment</th>
                <th>Added</th>
                {props.mayAct && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {props.cards.map((c) => (
                <tr key={c.id}>
                  <td>
                    <code>{c.id}</code>
                  </td>
                  <td>{c.status}</td>
                  <td>
                    <When at={c.expires_at} none="never" />
                  </td>
                  <td>{c.is_master_key ? "master key" : "no"}</td>
                  <td>{c.comment}</td>
                  <td>
                    <When at={c.created_at} />
                  </td>
                  {props.mayAct && (
                    <td class="actions">
                      <button
                        type="button"
                        aria-label={`Remove card ${c.id}`}
                        onClick={() => props.onRemove(c.id)}
                      >
                        Remove card
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

/** The public ADD's fields; the cloud checks them with the API's schema and its refusal shows here. */
function AddCardDialog(props: {
  act: (card: Parameters<typeof addCard>[1]) => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}) {
  return (
    <ActionDialog
      title="Add card"
      onClose={props.onClose}
      onDone={props.onDone}
      act={(form) => {
        const expires = String(form.get("expires_at") ?? "").trim();
        return props.act({
          id: String(form.get("id") ?? "").trim(),
          status: String(form.get("status") ?? "ACTIVE"),
          ...(expires ? { expires_at: expires } : {}),
          is_master_key: form.get("is_master_key") === "on",
          comment: String(form.get("comment") ?? ""),
        });
      }}
    >
      <label>
        Card id
        <input name="id" required autocomplete="off" placeholder="lowercase hex, e.g. 04a1b2c3d4" />
      </label>
      <label>
        Status
        <select name="status">
          <option value="ACTIVE">ACTIVE</option>
          <option value="INACTIVE">INACTIVE</option>
        </select>
      </label>
      <label>
        Expires at
        <input
          name="expires_at"
          autocomplete="off"
          placeholder="RFC 3339, e.g. 2030-01-31T23:59:00Z; empty: never"
        />
      </label>
      <label class="check">
        <input type="checkbox" name="is_master_key" /> Master key
      </label>
      <label>
        Comment
        <textarea name="comment" maxLength={1000} rows={2} />
      </label>
    </ActionDialog>
  );
}
