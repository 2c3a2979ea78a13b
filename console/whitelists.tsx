import { useState } from "preact/hooks";
import { Alert, Awaiting } from "./alert.tsx";
import { Link } from "./router.tsx";
import { queryOf } from "./sessions-api.ts";
import { ListTable } from "./table-part.tsx";
import { useLoad } from "./use-load.ts";
import type { ViewProps } from "./view-props.ts";
import { CardDialog, type Pending } from "./whitelist-dialogs.tsx";
import { Cards, KeySync, Targets } from "./whitelist-parts.tsx";
import { getWhitelist, listWhitelists } from "./whitelists-api.ts";

const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? "" : "s"}`;

/** `/console/whitelists`: the operator's whitelists (every operator's for a superadmin). */
export function WhitelistsView({ staff }: ViewProps) {
  const { data, error } = useLoad(listWhitelists, "");
  const everyone = staff.operator_id === null;
  return (
    <section>
      <h1>Whitelists</h1>
      <Alert error={error} />
      <ListTable
        rows={data?.data}
        error={error}
        empty="No whitelists."
        head={
          <>
            <th>Name</th>
            {everyone && <th>Operator</th>}
            <th>Cards</th>
            <th>Targets</th>
            <th>Key sync</th>
          </>
        }
        row={(w) => (
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
        )}
      />
    </section>
  );
}

/** `/console/whitelists/:id`: its cards, its targets and how far each gateway serving them is in sync. */
export function WhitelistView({ params, staff }: ViewProps) {
  const id = params.id ?? "";
  const { data: wl, error, reload } = useLoad(() => getWhitelist(id), id);
  const [pending, setPending] = useState<Pending | null>(null);
  const mayAct = staff.role !== "viewer";

  if (!wl) return <Awaiting title="Whitelist" error={error} />;
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
