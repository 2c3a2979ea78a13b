import type { Clock, DeviceDirectory, GatewayStore } from "../ports.ts";
import type { ControlBus, ControlReader, DoctorCheck } from "./control-api.ts";

/** What `parkctl doctor` looks at. */
export type DoctorDeps = {
  brokerUrl: string;
  broker: { readonly connected: boolean };
  clock: Clock;
  devices: Pick<DeviceDirectory, "version" | "all">;
  buses: readonly ControlBus[];
  readers: readonly ControlReader[];
  store: Pick<GatewayStore, "outbox" | "checkIntegrity">;
};

type Add = (check: string, status: DoctorCheck["status"], detail: string, hint: string) => void;

const ageS = (iso: string | null, now: Date) =>
  iso ? Math.round((now.getTime() - Date.parse(iso)) / 1000) : null;

/**
 * The daemon's self-check, one line per thing a technician can fix on site: the broker link, the device
 * map, the clock, each bus and reader, the database, and how long events have waited for the cloud.
 */
export function runDoctor(deps: DoctorDeps): DoctorCheck[] {
  const checks: DoctorCheck[] = [];
  const add: Add = (check, status, detail, hint) => checks.push({ check, status, detail, hint });
  checkBrokerAndMap(deps, add);
  const now = deps.clock.now();
  const year = now.getUTCFullYear();
  add(
    "clock",
    year >= 2024 ? "pass" : "fail",
    `system time ${now.toISOString()}`,
    year >= 2024 ? "" : "the clock is not set: enable NTP (timedatectl set-ntp true)",
  );
  checkLines(deps, add);
  const integrity = deps.store.checkIntegrity();
  add(
    "database",
    integrity === "ok" ? "pass" : "fail",
    `quick_check: ${integrity}`,
    integrity === "ok" ? "" : "stop the daemon and restore the state directory from backup",
  );
  const age = ageS(deps.store.outbox.stats().oldest, deps.clock.now());
  add(
    "outbox",
    age === null || age < 60 ? "pass" : age < 3600 ? "warn" : "fail",
    age === null ? "empty" : `oldest unconfirmed event is ${age} s old`,
    age === null || age < 60 ? "" : "events are waiting for the cloud: check the broker connection",
  );
  return checks;
}

function checkBrokerAndMap(deps: DoctorDeps, add: Add): void {
  const { connected } = deps.broker;
  add(
    "broker",
    connected ? "pass" : "fail",
    connected ? `connected to ${deps.brokerUrl}` : `not connected to ${deps.brokerUrl}`,
    connected ? "" : "check the network, the broker address and the gateway's secret",
  );
  // Without a map the gateway drives nothing; the cloud sends it (retained) once the broker link is up.
  const mapVersion = deps.devices.version;
  const mapped = deps.devices.all().length;
  add(
    "device map",
    mapVersion === null ? "fail" : mapped === 0 ? "warn" : "pass",
    mapVersion === null
      ? "no device map: this gateway has never received one from the cloud"
      : `version ${mapVersion}, ${mapped} device${mapped === 1 ? "" : "s"}`,
    mapVersion === null
      ? "connect the gateway to the broker; the cloud sends its map when it comes online"
      : mapped === 0
        ? "the site manifest lists no devices for this gateway: add them and apply it"
        : "",
  );
}

/** Each lock bus (open, and its boards answering) and each RFID reader. */
function checkLines(deps: DoctorDeps, add: Add): void {
  for (const b of deps.buses) {
    const down = b.monitor.health().filter((h) => !h.reachable);
    const status = !b.client.isOpen ? "fail" : down.length > 0 ? "warn" : "pass";
    add(
      `serial ${b.name}`,
      status,
      !b.client.isOpen
        ? `${b.path} is not open`
        : down.length
          ? `boards not answering: ${down.map((h) => h.addr).join(", ")}`
          : `${b.path} open, all boards answer`,
      status === "pass"
        ? ""
        : "check the cable and the board's power; `parkctl serial probe` retries at once",
    );
  }
  for (const r of deps.readers) {
    add(
      `reader ${r.id}`,
      r.port.isOpen ? "pass" : "warn",
      r.port.isOpen ? `${r.path} open` : `${r.path} missing`,
      r.port.isOpen ? "" : "check the reader's USB cable",
    );
  }
}
