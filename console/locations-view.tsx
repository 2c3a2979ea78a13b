import { useEffect, useState } from "preact/hooks";
import { Alert } from "./alert.tsx";
import { useLive } from "./live.ts";
import { CONNECTIONS, type Connection, type LocationSummary, listLocations } from "./locations-api.ts";
import { LocationsMap } from "./locations-map.tsx";
import { Link } from "./router.tsx";
import type { ViewProps } from "./view-props.ts";

/** How a connection reads on the page. */
export const CONNECTION_TEXT: Record<Connection, string> = {
  online: "Online",
  partially_online: "Partly online",
  offline: "Offline",
  outage: "Outage (confirmed)",
  unknown: "Never heard",
};

/**
 * Every location of the operator with its connection and counts, filtered by text and connection, under a
 * map of them where CONSOLE_MAP_TILES names tiles. The list asks only the cloud, so it works wherever the
 * console does; the map is drawn only while its tiles load.
 */
export function LocationsView({ staff }: ViewProps) {
  const initial = new URLSearchParams(location.search);
  const [q, setQ] = useState(initial.get("q") ?? "");
  const [connection, setConnection] = useState(initial.get("connection") ?? "");
  const [rows, setRows] = useState<LocationSummary[] | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    // The filters stay in the address, so a filtered list is a link too.
    const query = new URLSearchParams();
    if (q) query.set("q", q);
    if (connection) query.set("connection", connection);
    const qs = query.toString();
    history.replaceState(null, "", `${location.pathname}${qs ? `?${qs}` : ""}`);
    let current = true;
    listLocations({ q, connection }).then(
      (data) => {
        if (!current) return;
        setRows(data);
        setError(null);
      },
      (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      current = false;
    };
  }, [q, connection]);
  // Any location's change may move its counts or its connection.
  useLive(["location"], () => listLocations({ q, connection }).then(setRows));

  return (
    <section>
      <h1>Locations</h1>
      <form class="filters" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input
            type="search"
            name="q"
            value={q}
            placeholder="Code, label or address"
            onInput={(e) => setQ(e.currentTarget.value)}
          />
        </label>
        <label>
          Connection
          <select name="connection" value={connection} onChange={(e) => setConnection(e.currentTarget.value)}>
            <option value="">Any</option>
            {CONNECTIONS.map((c) => (
              <option key={c} value={c}>
                {CONNECTION_TEXT[c]}
              </option>
            ))}
          </select>
        </label>
      </form>
      <Alert error={error} />
      {rows === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <>
          <LocationsMap template={staff.map_tiles} rows={rows} />
          <LocationTable rows={rows} byOperator={staff.operator_id === null} />
        </>
      )}
    </section>
  );
}

/** `byOperator`: a superadmin's list, which names each location's operator. */
function LocationTable({ rows, byOperator }: { rows: LocationSummary[]; byOperator: boolean }) {
  if (rows.length === 0) return <p>No location matches.</p>;
  return (
    <div class="scroll">
      <table>
        <caption>{rows.length === 1 ? "1 location" : `${rows.length} locations`}</caption>
        <thead>
          <tr>
            <th scope="col">Location</th>
            {byOperator && <th scope="col">Operator</th>}
            <th scope="col">Address</th>
            <th scope="col">Connection</th>
            <th scope="col">Available</th>
            <th scope="col">Online</th>
            <th scope="col">Total</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((l) => (
            <tr key={l.id}>
              <td>
                <Link href={`/console/locations/${encodeURIComponent(l.id)}`}>{l.name}</Link>
              </td>
              {byOperator && <td>{l.operator_id}</td>}
              <td>{l.address}</td>
              <td>
                <span class={`conn conn-${l.connection}`}>{CONNECTION_TEXT[l.connection]}</span>
              </td>
              <td>{l.devices.available}</td>
              <td>{l.devices.online}</td>
              <td>{l.devices.total}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
