import { useEffect, useState } from "preact/hooks";
import { Alert } from "./alert.tsx";
import { countdown, duration } from "./countdown.ts";
import { useLive } from "./live.ts";
import { type DeviceCell, type GatewayPanel, getLocation, type LocationPage } from "./locations-api.ts";
import { CONNECTION_TEXT } from "./locations-view.tsx";
import { Link } from "./router.tsx";
import type { ViewProps } from "./view-props.ts";
import { When } from "./when.tsx";

const NOT_REPORTED = "not reported";

/** The cloud's now, moving every second: the browser's clock corrected by how far it was from the cloud's. */
function useCloudNow(cloudNow: string | undefined): number {
  const [offset, setOffset] = useState(0);
  const [, tick] = useState(0);
  useEffect(() => {
    if (cloudNow) setOffset(Date.parse(cloudNow) - Date.now());
  }, [cloudNow]);
  useEffect(() => {
    const timer = setInterval(() => tick((n) => n + 1), 1000);
    return () => clearInterval(timer);
  }, []);
  return Date.now() + offset;
}

/** One location: its devices by alias (each linked to its page) and its gateways as the cloud knows them. */
export function LocationView({ params }: ViewProps) {
  const id = params.id ?? "";
  const [page, setPage] = useState<LocationPage | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loads, setLoads] = useState(0);
  const now = useCloudNow(page?.now);

  useEffect(() => {
    let current = true;
    getLocation(id).then(
      (p) => {
        if (!current) return;
        setPage(p);
        setError(null);
      },
      (err: unknown) => current && setError(err instanceof Error ? err.message : String(err)),
    );
    return () => {
      current = false;
    };
  }, [id, loads]);
  useLive([`location:${id}`], () => getLocation(id).then(setPage));

  if (error && !page)
    return (
      <section>
        <h1>Location</h1>
        <Alert error={error} />
      </section>
    );
  if (!page) return <p aria-busy="true">Loading…</p>;
  const { location } = page;
  return (
    <section>
      <h1>{location.name}</h1>
      <p>
        {location.address && <>{location.address} · </>}
        <span class={`conn conn-${location.connection}`}>{CONNECTION_TEXT[location.connection]}</span>
        {location.offline_since && (
          <>
            {" "}
            since <When at={location.offline_since} none="never" />
          </>
        )}{" "}
        · {location.devices.available} available, {location.devices.online} online of {location.devices.total}{" "}
        <button type="button" onClick={() => setLoads((n) => n + 1)}>
          Refresh
        </button>
      </p>
      <h2>Devices</h2>
      <ul class="grid" aria-label="Devices">
        {page.devices.map((d) => (
          <DeviceTile key={d.id} d={d} now={now} occupantShown={page.occupant_shown} />
        ))}
      </ul>
      <h2>Gateways</h2>
      {page.gateways.length === 0 ? (
        <p>No gateway serves this location.</p>
      ) : (
        page.gateways.map((g) => <Gateway key={g.id} g={g} />)
      )}
    </section>
  );
}

function DeviceTile({ d, now, occupantShown }: { d: DeviceCell; now: number; occupantShown: boolean }) {
  return (
    <li class="tile">
      <Link href={`/console/devices/${encodeURIComponent(d.id)}`}>{d.alias}</Link> <small>{d.type}</small>
      <dl>
        <dt>State</dt>
        <dd>
          {d.state.value}
          {d.state.timeout_at && (
            <>
              {" "}
              (<span class="countdown">{countdown(d.state.timeout_at, now)}</span>)
            </>
          )}
        </dd>
        <dt>Lock</dt>
        <dd>{d.lock_state}</dd>
        <dt>Health</dt>
        <dd>{d.health ?? "never heard"}</dd>
        <dt>Sleep</dt>
        <dd>{d.sleep_state || "awake"}</dd>
        {d.hardware_state !== "NORMAL" && (
          <>
            <dt>Hardware</dt>
            <dd>{d.hardware_state}</dd>
          </>
        )}
        {occupantShown && (
          <>
            <dt>Occupant</dt>
            <dd class="id">{d.occupant ?? "none"}</dd>
          </>
        )}
      </dl>
    </li>
  );
}

function keysText(k: GatewayPanel["keys"]): string {
  if (!k) return NOT_REPORTED;
  if (k.held_version === null) return `cloud at ${k.cloud_version}, gateway ${NOT_REPORTED}`;
  const step = k.held_version === k.cloud_version ? "in step" : "behind";
  return `holds ${k.held_version} of the cloud's ${k.cloud_version} (${step})`;
}

function Gateway({ g }: { g: GatewayPanel }) {
  return (
    <article class="gateway" aria-label={`Gateway ${g.id}`}>
      <h3>{g.id}</h3>
      <dl>
        <dt>Connection</dt>
        <dd>
          {g.online ? "Online" : "Offline"}
          {g.health && ` (${g.health})`}
        </dd>
        <dt>Last heartbeat</dt>
        <dd>
          <When at={g.last_heartbeat_at} none="never" />
        </dd>
        <dt>Outbox</dt>
        <dd>
          {g.outbox ? (
            <>
              unconfirmed from seq {g.outbox.unconfirmed_from}, reported{" "}
              <When at={g.outbox.reported_at} none="never" />
              {g.outbox.last_applied_seq !== null && `; last applied seq ${g.outbox.last_applied_seq}`}
            </>
          ) : (
            NOT_REPORTED
          )}
        </dd>
        <dt>Outbox depth</dt>
        <dd>{g.outbox?.depth ?? NOT_REPORTED}</dd>
        <dt>Whitelist version</dt>
        <dd>{keysText(g.keys)}</dd>
        <dt>Runtime version</dt>
        <dd>{g.runtime_version ?? NOT_REPORTED}</dd>
        <dt>Uptime</dt>
        <dd>
          {g.uptime_s === null ? (
            NOT_REPORTED
          ) : (
            <>
              {duration(g.uptime_s)} (since <When at={g.started_at} />)
            </>
          )}
        </dd>
      </dl>
    </article>
  );
}
