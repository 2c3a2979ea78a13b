import type { Logger } from "pino";
import { isBookingCommand } from "../../shared/domain/device-types.ts";
import type { CommandRequest } from "../../shared/wire/messages.ts";
import { createDeviceTurns, type DeviceTurns } from "../devices/device-turns.ts";
import type {
  Action,
  Actuator,
  Camera,
  Clock,
  DeviceDirectory,
  GatewayStore,
  LoggedCommand,
  MappedDevice,
  PhotoStore,
  Reading,
  SensorReadings,
  SleepStates,
} from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";
import { failed, outcomeReport, type Performed, succeeded } from "./command-outcome.ts";
import { photoParts } from "./photo-upload.ts";
import { isStoreFull, STORE_FULL_REASON, type StoreSpace } from "./store-full.ts";

export type ExecutorDeps = {
  /**
   * The command log, the outbox, the bookings and the lockers cards parked, and the transactions that tie
   * them to a report.
   */
  store: Pick<GatewayStore, "commandLog" | "outbox" | "bookings" | "parkedCards" | "atomically">;
  /** The devices driven: which they are, how to move them, what their sensors and sleep show. */
  devices: {
    registry: DeviceDirectory;
    actuator: Actuator;
    sensors: SensorReadings;
    /** Sleep states: a LOCAL_WAKEUP device in deep sleep takes no command (spec: power_save_strategy). */
    sleep?: Pick<SleepStates, "refusal">;
  };
  /** The camera (null when the gateway has none) and where its photos are kept until sent. */
  photos: { camera: Camera | null; files: PhotoStore };
  clock: Clock;
  /** The cloud's clock as the gateway knows it: deadlines are the cloud's and are judged on it. */
  cloudTime: Pick<CloudClock, "observe" | "cloudNowMs" | "cloudLatestMs" | "settled">;
  log: Logger;
  /** Where a command the full store could not record is refused (store-full.ts). */
  storeSpace?: Pick<StoreSpace, "refused" | "unrecorded" | "refusing">;
  /** Each device's turns, shared with the tap handler; its own when not given. */
  turns?: DeviceTurns;
  /** What others follow: a command finished; a booking was recorded or ended (the expiry timer looks again). */
  notify?: { finished?: (name: string, ok: boolean) => void; bookingsChanged?: () => void };
};

const ACTION_OF: Partial<Record<CommandRequest["name"], Action>> = {
  lock: "lock",
  "force-lock": "lock",
  unlock: "unlock",
  "force-unlock": "unlock",
};

/**
 * Executes commands from the cloud (flow 1, steps 3–6). The command id is the idempotency key: an id seen
 * before is never actuated again — its outcome is reported again instead (S31, F8). A command past its
 * deadline on the cloud's clock (as the gateway estimates it, never its own wall clock) is refused, never
 * actuated late (F7): when it arrives, and again when its turn comes (docs/decisions/clock.md). Taking a
 * command and reporting RECEIVED commit together, as do the outcome and its report, so a crash can lose
 * neither.
 *
 * Commands for one device run one after the other. A force command names the command it supersedes:
 * if that one has not started it never will (it ends ERROR "superseded"); if it has not even arrived it
 * is refused when it does; if it already ran, its outcome is reported as it happened.
 */
export function createCommandExecutor(deps: ExecutorDeps) {
  const { commandLog, outbox, bookings } = deps.store;
  const { registry, actuator, sensors } = deps.devices;
  const inFlight = new Set<string>();
  /** Commands moving hardware now: a stopping daemon lets them finish before it closes the buses. */
  const running = new Set<Promise<void>>();
  let closing = false;
  const turns = deps.turns ?? createDeviceTurns();
  /** Commands taken but not started that a later command superseded: id → the superseding command. */
  const superseded = new Map<string, string>();
  const started = new Set<string>();

  /**
   * Its time may have run out on the cloud's clock: judged on the latest the cloud's now can be, so a late
   * message cannot make a command look in time; on the lower bound where no round trip gives that. Only a
   * cloud older than the rule stamps nothing: its deadlines are judged on the wall clock, as they always were.
   */
  const expired = (req: CommandRequest) => {
    const now = deps.cloudTime.cloudLatestMs() ?? deps.cloudTime.cloudNowMs() ?? deps.clock.now().getTime();
    return now >= Date.parse(req.expires_at);
  };

  function report(
    req: Pick<CommandRequest, "command_id" | "device_id">,
    state: "RECEIVED" | "SUCCESS" | "ERROR",
    reason = "",
  ) {
    outbox.append({
      type: "command_progress",
      command_id: req.command_id,
      device_id: req.device_id,
      state,
      reason,
    });
  }

  const finish = (req: LoggedCommand, performed: Performed, known: boolean) =>
    deps.store.atomically(() => {
      const at = deps.clock.now().toISOString();
      if (performed.ok && performed.commit) performed.commit();
      const device = registry.get(req.device_id);
      if (device && performed.sensors) {
        // A sync-device reading goes up as a reading; a movement's latch travels in the command's own report.
        if (req.name === "sync-device") sensors.record(device, performed.sensors, "sync", { always: true });
        else sensors.note(device, performed.sensors);
      }
      if (!known)
        commandLog.record({
          command_id: req.command_id,
          device_id: req.device_id,
          name: req.name,
          state: "RECEIVED",
          at,
        });
      commandLog.finish(
        req.command_id,
        performed.ok ? "SUCCESS" : "ERROR",
        performed.reason,
        performed.lockState,
        at,
      );
      outbox.append(outcomeReport(req, performed));
    });

  /**
   * Records what the hardware did; when the store is full, its report is owed instead, so the cloud learns
   * where the latch went once there is room (the log keeps the command taken: it never runs again).
   */
  function finishOrOwe(req: CommandRequest, outcome: Performed): void {
    try {
      finish(req, outcome, true);
    } catch (err) {
      if (!isStoreFull(err) || !deps.storeSpace) throw err;
      deps.storeSpace.unrecorded(outcomeReport(req, outcome), {
        command_id: req.command_id,
        name: req.name,
        ok: outcome.ok,
      });
      // The owed report carries the latch: a reading after it is news against that, not against what the
      // cloud heard before (a lock since, not told, left the cloud with the owed unlock: seed 710741).
      const device = registry.get(req.device_id);
      if (device && outcome.sensors && req.name !== "sync-device") noteOnFullStore(device, outcome.sensors);
    }
  }

  /** Notes a reading; what it sets off that the full store refuses (a parked card's release) stays undone. */
  function noteOnFullStore(device: MappedDevice, reading: Reading): void {
    try {
      sensors.note(device, reading);
    } catch (err) {
      if (!isStoreFull(err)) throw err;
    }
  }

  const take = (req: CommandRequest) =>
    deps.store.atomically(() => {
      commandLog.record({
        command_id: req.command_id,
        device_id: req.device_id,
        name: req.name,
        state: "RECEIVED",
        at: deps.clock.now().toISOString(),
      });
      report(req, "RECEIVED");
    });

  /**
   * Marks the command a force command takes over. One not yet started is skipped when its turn comes;
   * one not yet arrived is recorded as refused, so it is never actuated when it does arrive.
   */
  const supersede = (oldId: string, by: CommandRequest) =>
    deps.store.atomically(() => {
      const seen = commandLog.get(oldId);
      if (!seen) {
        const at = deps.clock.now().toISOString();
        commandLog.record({
          command_id: oldId,
          device_id: by.device_id,
          name: "unknown",
          state: "RECEIVED",
          at,
        });
        commandLog.finish(oldId, "ERROR", `superseded by ${by.name} before it arrived`, null, at);
      } else if (seen.state === "RECEIVED" && !started.has(oldId)) {
        superseded.set(oldId, by.name);
      }
    });

  /**
   * A booking is recorded, or ended, in the gateway's store for local access; the hardware does not move.
   * The write commits with the report of its SUCCESS.
   */
  function performBooking(req: CommandRequest): Performed {
    const deviceId = req.device_id;
    const now = deps.clock.now();
    // A booking's end is the cloud's time: judged on the cloud's clock, as the deadline is.
    const cloudNow = new Date(deps.cloudTime.cloudNowMs() ?? now.getTime());
    if (req.name === "book") {
      const booking = req.params.booking;
      if (!booking) return failed("book without a booking (holder and end)");
      if (Date.parse(booking.until) <= cloudNow.getTime())
        return failed("the booking had already ended when it reached the gateway");
      const { holder, until } = booking;
      const at = now.toISOString();
      const commit = () =>
        bookings.put({ device_id: deviceId, holder, until, command_id: req.command_id, booked_at: at });
      return succeeded("", commit);
    }
    const held = bookings.active(deviceId, cloudNow) !== undefined;
    const commit = () => void bookings.clear(deviceId);
    return succeeded(held ? "" : "no booking was held", commit);
  }

  async function perform(req: CommandRequest): Promise<Performed> {
    const device = registry.get(req.device_id);
    if (!device)
      return failed(
        `device ${req.device_id} is not driven by this gateway (device map ${registry.version ?? "none"})`,
      );
    if (isBookingCommand(req.name)) return performBooking(req);
    // Bookings above need only the gateway; nothing else is sent to a device that cannot hear it.
    const asleep = deps.devices.sleep?.refusal(device);
    if (asleep) return failed(asleep);
    // A locker a card parked (rfid_parking) is the card's, whatever the cloud knew when it sent this lock:
    // the shared rule's held_by_another, and the machine's "a locked locker does not lock". force-lock goes.
    if (req.name === "lock" && deps.store.parkedCards.get(device.device_id) !== null) {
      const locked = sensors.get(device.device_id).latch === "locked";
      return {
        ...failed("in use: an RFID card parked it"),
        lockState: locked ? "LOCKED" : null,
        heldByAnother: true,
      };
    }
    const action = ACTION_OF[req.name];
    if (action) {
      // Asked again when the movement's turn on the bus comes: a board that does not answer may hold it.
      const o = await actuator.run(device, action, { stillWanted: () => !expired(req) });
      // A device locked is in use: its booking is over (as in the cloud's device machine).
      if (o.ok && action === "lock") return { ...o, commit: () => void bookings.clear(device.device_id) };
      return o;
    }
    if (req.name === "sync-device")
      return actuator.run(device, req.params.power_cycle ? "power_cycle" : "status");
    if (req.name === "take-photo") {
      if (!deps.photos.camera || !device.has_camera) return failed("no camera on this device");
      const photo = await deps.photos.camera.capture();
      const parts = photoParts(req, photo);
      if ("refused" in parts) return failed(parts.refused);
      deps.photos.files.save(req.command_id, photo);
      // The photo goes up with the SUCCESS, in the same transaction: acknowledged means on its way.
      const commit = () => {
        for (const p of parts) outbox.append(p);
      };
      return succeeded(`photo taken (${photo.bytes.length} bytes)`, commit);
    }
    return failed(`${req.name} is not a hardware command`);
  }

  /** Waits for the device's earlier commands and taps, then runs this one unless superseded meanwhile. */
  function runInTurn(req: CommandRequest): Promise<Performed> {
    return turns.run(req.device_id, () => runNow(req));
  }

  async function runNow(req: CommandRequest): Promise<Performed> {
    try {
      const by = superseded.get(req.command_id);
      if (by) return failed(`superseded by ${by}; not executed`);
      // Its turn may come after its time ran out (a long command before it, a device waking up).
      if (expired(req)) return failed("the command's deadline passed while it waited its turn; not executed");
      started.add(req.command_id);
      return await perform(req);
    } finally {
      superseded.delete(req.command_id);
      started.delete(req.command_id);
    }
  }

  /**
   * Takes the command; false when the store is full (SQLITE_FULL): nothing was recorded and nothing will
   * move, and the ERROR saying so goes up once the store can journal it again.
   */
  /** Runs a taken command on its device's turn and records its outcome. */
  async function execute(req: CommandRequest): Promise<void> {
    let outcome: Performed;
    try {
      outcome = await runInTurn(req);
    } catch (err) {
      outcome = failed(`gateway error: ${(err as Error).message}`);
    }
    finishOrOwe(req, outcome);
    if (outcome.ok && outcome.commit) deps.notify?.bookingsChanged?.();
    deps.notify?.finished?.(req.name, outcome.ok);
    deps.log.info(
      { command_id: req.command_id, name: req.name, ok: outcome.ok, reason: outcome.reason },
      "command executed",
    );
  }

  function recordOrRefuse(req: CommandRequest): boolean {
    try {
      if (req.supersedes) supersede(req.supersedes, req);
      take(req);
      return true;
    } catch (err) {
      if (!isStoreFull(err) || !deps.storeSpace) throw err;
      const { command_id, device_id } = req;
      deps.storeSpace.refused(
        { type: "command_progress", command_id, device_id, state: "ERROR", reason: STORE_FULL_REASON },
        { command_id, name: req.name },
      );
      return false;
    }
  }

  return {
    async handle(req: CommandRequest): Promise<void> {
      if (closing || inFlight.has(req.command_id)) return; // stopping, or a redelivery we are working on
      // Refused for a full store, its ERROR still owed: the cloud hears that, and nothing moves.
      if (deps.storeSpace?.refusing(req.command_id)) return;
      const seen = commandLog.get(req.command_id);
      if (seen) {
        deps.log.info(
          { command_id: req.command_id, state: seen.state },
          "repeated command: reporting its outcome again",
        );
        // Without the latch it read then: this report takes a later place in the outbox than whatever the
        // sensors said since, and the cloud would take that old reading for the newest.
        if (seen.state !== "RECEIVED") report(req, seen.state, seen.reason);
        return;
      }
      inFlight.add(req.command_id);
      try {
        // Its own `sent_at` is the base before any other (the link told it already: this changes nothing then).
        deps.cloudTime.observe(req.sent_at);
        // Just after a (re)connect this may be a copy the broker kept for hours: judge it on the cloud's
        // time now, which the cloud's answer to this session brings.
        await deps.cloudTime.settled();
        if (expired(req)) {
          const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
          deps.log.warn(
            {
              command_id: req.command_id,
              expires_at: req.expires_at,
              cloud_now: iso(deps.cloudTime.cloudNowMs()),
              cloud_latest: iso(deps.cloudTime.cloudLatestMs()),
            },
            "stale command refused",
          );
          finish(req, failed("the command arrived after its deadline and was not executed"), false);
          return;
        }
        if (closing || !recordOrRefuse(req)) return;
        const run = execute(req);
        running.add(run);
        await run.finally(() => running.delete(run));
      } finally {
        inFlight.delete(req.command_id);
      }
    },

    /**
     * Takes no more commands: the daemon is stopping, and the cloud delivers what it still waits for again
     * when this gateway is back online. One taken now could be cut off by the closing bus after its board
     * moved the latch, and its ERROR would carry no reading of where the latch went.
     */
    close(): void {
      closing = true;
    },

    /** Resolves once every command that was moving hardware has finished and recorded its outcome. */
    async settled(): Promise<void> {
      await Promise.allSettled([...running]);
    },

    /**
     * Commands taken but not finished when the process died: the outcome is unknown, so they end in ERROR
     * (the cloud returns the device to its previous state) rather than staying open forever.
     */
    recoverInterrupted(): number {
      const open = commandLog.unfinished();
      for (const c of open) {
        finish(c, failed("interrupted by a gateway restart; the result is unknown"), true);
      }
      return open.length;
    },
  };
}

export type CommandExecutor = ReturnType<typeof createCommandExecutor>;
