import { normaliseCardId } from "../../shared/domain/card-id.ts";
import { packageVersion } from "../../shared/node/version.ts";
import type { SensorCause } from "../../shared/wire/messages.ts";
import type {
  Action,
  Actuator,
  BrokerLink,
  Clock,
  DeviceDirectory,
  GatewayStore,
  MappedDevice,
  Reading,
  SensorReadings,
  SleepStates,
} from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";
import { compareAliases } from "./alias-order.ts";
import type {
  ActuationResult,
  CardGrantView,
  ControlApi,
  ControlBus,
  ControlReader,
  DeviceView,
} from "./control-api.ts";
import { CONTROL_ERROR, ControlError } from "./control-server.ts";
import { runDoctor } from "./doctor.ts";

/** What a technician is told when the hardware acted but the store could not keep it: what it did, too. */
const notKept = (what: string, r: ActuationResult, err: unknown) =>
  new ControlError(
    CONTROL_ERROR.failed,
    `${what}: ${r.result}, latch ${r.latch ?? "unknown"}, but not recorded here (${(err as Error).message}); ` +
      "the cloud is told where the latch is once the store has room",
  );

/** Exactly what parkctl's side of the daemon reads and drives; gateway.ts hands each part in. */
export type ControlDeps = {
  /** Who the daemon is, since when, and its link to the cloud. */
  gateway: {
    id: string;
    brokerUrl: string;
    startedAt: Date;
    clock: Clock;
    /** The cloud's clock as the gateway knows it: doctor measures the wall clock against it, bookings end on it. */
    cloudTime?: Pick<CloudClock, "offsetMs" | "cloudNow">;
    broker: Pick<BrokerLink, "connected" | "connectedSince">;
  };
  /** The devices driven: the map, their sensors and sleep, and how to move and read them. */
  devices: {
    directory: DeviceDirectory;
    sensors: Pick<SensorReadings, "get" | "record">;
    /** Devices' sleep states (power save). */
    sleep?: Pick<SleepStates, "get">;
    actuator: Actuator;
    /** Reads a device's sensors now; a change it finds goes to the cloud like any other. */
    read(device: MappedDevice, cause: SensorCause): Promise<void>;
  };
  store: Pick<
    GatewayStore,
    "outbox" | "commandLog" | "bookings" | "localActions" | "keys" | "checkIntegrity"
  >;
  buses: readonly ControlBus[];
  readers: readonly ControlReader[];
};

const ageS = (iso: string | null, now: Date) =>
  iso ? Math.round((now.getTime() - Date.parse(iso)) / 1000) : null;

/** The daemon's side of parkctl: reads state from the running parts and acts through the same actuator. */
export function createControlApi(deps: ControlDeps): ControlApi {
  const { gateway } = deps;
  const { directory, sensors: readings, actuator } = deps.devices;
  const now = () => gateway.clock.now();
  const { outbox, commandLog } = deps.store;

  function view(alias: string): DeviceView | null {
    const device = directory.byAliasName(alias);
    if (!device) return null;
    const bus = device.bus ? deps.buses.find((b) => b.boards.includes(device.bus?.board ?? -1)) : undefined;
    const last = commandLog.lastFor(device.device_id);
    const live = readings.get(device.device_id);
    // A booking's end is the cloud's time (docs/decisions/clock.md).
    const booking = deps.store.bookings.active(device.device_id, gateway.cloudTime?.cloudNow() ?? now());
    const strategy = device.power_save_strategy ?? "NONE";
    return {
      device_id: device.device_id,
      alias: device.alias,
      type: device.type,
      bus: bus?.name ?? null,
      board: device.bus?.board ?? null,
      channel: device.bus?.channel ?? null,
      reachable: device.bus ? (bus?.monitor.isReachable(device.bus.board) ?? false) : true,
      latch: live.latch,
      door_open: live.door_open,
      item_present: live.item_present,
      read_at: live.read_at,
      last_command: last
        ? {
            name: last.name,
            result: last.state === "RECEIVED" ? "in progress" : last.state,
            at: last.finished_at ?? last.received_at,
            command_id: last.command_id,
            reason: last.reason,
          }
        : null,
      booking: booking ? { holder: booking.holder, until: booking.until } : null,
      ...(strategy === "NONE"
        ? {}
        : { power_save: { strategy, sleep_state: deps.devices.sleep?.get(device.device_id) ?? null } }),
    };
  }

  async function act(alias: string, action: Action): Promise<ActuationResult & { sensors: Reading | null }> {
    const device = directory.byAliasName(alias);
    if (!device)
      throw new ControlError(CONTROL_ERROR.deviceNotFound, `no device with alias ${alias} on this gateway`);
    const t0 = performance.now();
    const o = await actuator.run(device, action);
    return {
      ok: o.ok,
      result: o.ok ? "ok" : o.reason,
      latch: o.lockState === null ? null : o.lockState === "LOCKED" ? "locked" : "unlocked",
      ms: Math.round(performance.now() - t0),
      sensors: o.sensors,
    };
  }

  /**
   * Writes a technician's action, then where it left the latch, even when the store refused the first
   * (full): a refused reading is told once there is room (sensor-readings.ts), so the cloud follows the
   * latch whatever else could be kept. Returns the first error, if any.
   */
  function keep(action: () => void, reading: () => unknown): unknown {
    let unkept: unknown = null;
    for (const write of [action, reading])
      try {
        write();
      } catch (err) {
        unkept ??= err;
      }
    return unkept;
  }

  /**
   * Keeps a technician's action before anything moves, as a command's and a tap's are: a store that cannot
   * take it (full) refuses it, so nothing moves without a record (docs/faults.md).
   */
  function begin(device_alias: string, who: string, why: string, action: string): number {
    if (!directory.byAliasName(device_alias))
      throw new ControlError(
        CONTROL_ERROR.deviceNotFound,
        `no device with alias ${device_alias} on this gateway`,
      );
    try {
      const at = now().toISOString();
      return deps.store.localActions.record({ at, who, why, device_alias, action, result: "started" });
    } catch (err) {
      throw new ControlError(
        CONTROL_ERROR.failed,
        `refused, nothing moved: the action could not be recorded (${(err as Error).message}); ` +
          "free space on the state disk (parkctl doctor)",
      );
    }
  }

  return {
    status() {
      const s = outbox.stats();
      return Promise.resolve({
        gateway_id: gateway.id,
        version: packageVersion(),
        uptime_s: Math.round((now().getTime() - gateway.startedAt.getTime()) / 1000),
        now: now().toISOString(),
        broker: {
          url: gateway.brokerUrl,
          connected: gateway.broker.connected,
          since: gateway.broker.connectedSince,
        },
        buses: deps.buses.map((b) => ({
          name: b.name,
          path: b.path,
          open: b.client.isOpen,
          boards: b.monitor.health(),
        })),
        readers: deps.readers.map((r) => ({
          id: r.id,
          path: r.path,
          open: r.port.isOpen,
          last_seen: r.port.lastSeen,
        })),
        outbox: { pending: s.pending, oldest_age_s: ageS(s.oldest, now()) },
        devices: directory.all().length,
        keys: { version: deps.store.keys.version(), grants: deps.store.keys.count() },
      });
    },

    devices() {
      const views: DeviceView[] = [];
      for (const device of directory.all()) {
        const v = view(device.alias);
        if (v) views.push(v);
      }
      return Promise.resolve(views.sort((a, b) => compareAliases(a.alias, b.alias)));
    },

    async device(alias) {
      const device = directory.byAliasName(alias);
      // A fresh reading; a change it finds goes to the cloud like any other.
      if (device) await deps.devices.read(device, "sweep");
      return view(alias);
    },

    async actuate(alias, action, who, why) {
      const id = begin(alias, who, why, action);
      const { sensors, ...result } = await act(alias, action);
      const device = directory.byAliasName(alias);
      const detail = `${action} by ${who}: ${why} (${result.result})`;
      // Recorded locally and reported to the cloud: a technician's action is part of the site's history,
      // and the device's state there follows what the latch now holds.
      const unkept = keep(
        () => {
          deps.store.localActions.settle(id, result.result);
          if (device)
            outbox.append({
              type: "hardware_event",
              device_id: device.device_id,
              source: "parkctl",
              event: action === "lock" ? "latch_locked" : "latch_unlocked",
              detail,
            });
        },
        () => device && sensors && readings.record(device, sensors, "technician", { detail, always: true }),
      );
      if (unkept) throw notKept(action, result, unkept);
      return result;
    },

    async testCycle(alias, who) {
      const id = begin(alias, who, "test cycle", "test-cycle");
      const steps: (ActuationResult & { step: string })[] = [];
      let last: Reading | null = null;
      for (const step of ["unlock", "status", "lock", "status"] as const) {
        const { sensors, ...r } = await act(alias, step);
        steps.push({ ...r, step });
        last = sensors ?? last;
        if (!r.ok) break;
      }
      const outcome = steps.every((s) => s.ok) ? "ok" : "failed";
      // Where the cycle left the latch is what the cloud must show (it may have stopped half-way).
      const device = directory.byAliasName(alias);
      const detail = `test-cycle by ${who} (${outcome})`;
      const unkept = keep(
        () => deps.store.localActions.settle(id, outcome),
        () => device && last && readings.record(device, last, "technician", { detail, always: true }),
      );
      const final = steps.at(-1);
      if (unkept && final) throw notKept("test cycle", { ...final, result: outcome }, unkept);
      return { alias, steps };
    },

    outbox() {
      const s = outbox.stats();
      return Promise.resolve({
        pending: s.pending,
        oldest_age_s: ageS(s.oldest, now()),
        rows: outbox
          .rows(50)
          .map((r) => ({ seq: r.seq, type: r.type, age_s: ageS(r.created_at, now()) ?? 0 })),
      });
    },

    keys(typed) {
      const card = normaliseCardId(typed);
      if (!card)
        return Promise.reject(
          new ControlError(
            CONTROL_ERROR.badRequest,
            "not a card id: hex digits (separators allowed), an even number of them, at most 20",
          ),
        );
      const at = now().getTime();
      const grants = deps.store.keys.grantsFor(card).map(
        (gr): CardGrantView => ({
          whitelist_id: gr.whitelist_id,
          status: gr.status,
          expires_at: gr.expires_at,
          is_master_key: gr.is_master_key,
          location_ids: gr.location_ids,
          devices: gr.device_ids.map((id) => directory.get(id)?.alias ?? id),
          state:
            gr.status !== "ACTIVE"
              ? "inactive"
              : gr.expires_at !== null && Date.parse(gr.expires_at) <= at
                ? "expired"
                : "valid",
        }),
      );
      return Promise.resolve({ card_id: card, version: deps.store.keys.version(), grants });
    },

    probeSerial() {
      return Promise.all(
        deps.buses.map(async (b) => ({
          bus: b.name,
          path: b.path,
          open: b.client.isOpen,
          boards: (await b.monitor.poll()).map((h) => ({
            addr: h.addr,
            ok: h.reachable,
            firmware: h.firmware,
            channels: h.channels,
            error: h.reachable ? null : "no answer",
          })),
        })),
      );
    },

    doctor() {
      const { brokerUrl, broker, clock, cloudTime } = gateway;
      return Promise.resolve(runDoctor({ ...deps, brokerUrl, broker, clock, cloudTime, devices: directory }));
    },
  };
}
