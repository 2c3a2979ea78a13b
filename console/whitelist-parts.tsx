/** A whitelist page's parts: its targets, each gateway's key sync, its cards. */
import type { ConsoleGatewaySync, ConsoleWhitelist } from "../shared/api/console-whitelists.ts";
import type { WhitelistEntity } from "../shared/api/whitelist.ts";
import { Link } from "./router.tsx";
import { RowAction, TablePart } from "./table-part.tsx";
import { When } from "./when.tsx";

/** The devices and locations the whitelist applies to, each linked to its page. */
export function Targets({ wl }: { wl: ConsoleWhitelist }) {
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
export function KeySync({ wl }: { wl: ConsoleWhitelist }) {
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

/** "in sync at version N", or "pending on gw-… since …" (docs/decisions/console.md). */
export function SyncState({ g }: { g: ConsoleGatewaySync }) {
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

export function Cards(props: {
  cards: WhitelistEntity[];
  mayAct: boolean;
  onRemove: (card: string) => void;
}) {
  return (
    <TablePart
      title="Cards"
      empty="No cards."
      rows={props.cards.length}
      head={
        <>
          <th>Card</th>
          <th>Status</th>
          <th>Expires</th>
          <th>Master key</th>
          <th>Comment</th>
          <th>Added</th>
          {props.mayAct && <th>Actions</th>}
        </>
      }
    >
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
              <RowAction label="Remove card" subject={c.id} onClick={() => props.onRemove(c.id)} />
            </td>
          )}
        </tr>
      ))}
    </TablePart>
  );
}
