import type { Clock, DeviceDirectory, GatewayStore } from "../ports.ts";
import { type CloudClock, SKEW_BOUND_MS } from "../time/cloud-clock.ts";
import type { ControlBus, ControlReader, DoctorCheck } from "./control-api.ts";

/** What `parkctl doctor` looks at. */
export type DoctorDeps = {
  brokerUrl: string;
  broker: { readonly connected: boolean };
  clock: Clock;
  /** The cloud's clock as the gateway knows it, which the wall clock is measured against. */
  cloudTime?: Pick<CloudClock, "offsetMs">;
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
  checkClock(deps, add);
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

/**
 * The wall clock against the cloud's (docs/decisions/clock.md). Deadlines and card expiry run on the cloud's
 * clock whatever this one says, but logs, reports' `observed_at` and anything local read the wall clock.
 */
function checkClock(deps: DoctorDeps, add: Add): void {
  const now = deps.clock.now();
  const system = `system time ${now.toISOString()}`;
  const ntp = "set the time: enable NTP (timedatectl set-ntp true)";
  const offset = deps.cloudTime?.offsetMs() ?? null;
  const unset = now.getUTCFullYear() < 2024;
  if (offset === null && !deps.cloudTime) add("clock", unset ? "fail" : "pass", system, unset ? ntp : "");
  else if (offset === null)
    add(
      "clock",
      unset ? "fail" : "warn",
      `not yet synced with the cloud's clock; ${system}`,
      unset ? ntp : "the gateway learns the cloud's time from its messages: see the broker line",
    );
  else if (Math.abs(offset) <= SKEW_BOUND_MS)
    add("clock", "pass", `within ${seconds(offset)} s of the cloud's; ${system}`, "");
  else
    add(
      "clock",
      "warn",
      `the wall clock is ${seconds(offset)} s ${offset < 0 ? "ahead of" : "behind"} the cloud's; ${system}`,
      `${ntp}. Commands and card expiry follow the cloud's clock meanwhile`,
    );
}

const seconds = (ms: number) => (Math.abs(ms) / 1000).toFixed(1);

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
