import type { Logger } from "pino";
import { decideTap, type TapContext, type TapDecision } from "../../shared/domain/access-decision.ts";
import { maskCardId } from "../../shared/domain/card-id.ts";
import type { AccessDecision, Grant } from "../../shared/wire/messages.ts";
import { createDeviceTurns, type DeviceTurns } from "../devices/device-turns.ts";
import type {
  AccessDraft,
  Actuator,
  Clock,
  DeviceDirectory,
  GatewayStore,
  MappedDevice,
  Outcome,
  SensorReadings,
  SleepStates,
} from "../ports.ts";
import type { CloudClock } from "../time/cloud-clock.ts";
import { isDoor } from "./board-events.ts";
import { isStoreFull, STORE_FULL_TAP, type StoreSpace } from "./store-full.ts";

export type TapHandlerDeps = {
  /** The key cache, parked cards and bookings it decides from; the outbox it reports to. */
  store: Pick<GatewayStore, "keys" | "parkedCards" | "bookings" | "outbox" | "tapJournal" | "atomically">;
  registry: DeviceDirectory;
  sensors: SensorReadings;
  actuator: Actuator;
  /** The card's grants as the cloud knows them; null when offline or no answer came in time. */
  askCloud: (card: string, deviceId: string | null) => Promise<Grant[] | null>;
  clock: Clock;
  /**
   * The cloud's clock as the gateway knows it: a card's `expires_at` and a booking's end are the cloud's
   * times, judged on it; the wall clock only until the gateway has heard the cloud (docs/decisions/clock.md).
   */
  cloudTime?: Pick<CloudClock, "cloudNow">;
  log: Logger;
  onDecided?: (decision: AccessDecision) => void;
  /** Devices' sleep states: a tap wakes the device its reader serves. */
  sleep?: Pick<SleepStates, "record">;
  /** Where a tap the full store could not journal is refused (store-full.ts). */
  storeSpace?: Pick<StoreSpace, "refused">;
  /** Each device's turns, shared with the command executor; its own when not given. */
  turns?: DeviceTurns;
};

/**
 * A card tapped on a reader → decision → actuation → outbox (ARCHITECTURE flow 2). Decided locally from the
 * key cache, the latch as sensed, the card that parked the device and its booking; a card the cache does
 * not hold at all is asked of the cloud (short deadline) and refused as `offline_unknown` without an answer.
 * Every tap becomes an `access_decision` in the durable outbox, refusals included, committed together with
 * what the actuation changed (the parked card, the sensors). Taps on one device are decided one at a time,
 * so two cards racing for a free locker cannot both park in it.
 */
export function createTapHandler(deps: TapHandlerDeps) {
  const { keys, parkedCards, bookings, outbox, tapJournal } = deps.store;
  const turns = deps.turns ?? createDeviceTurns();

  function context(device: MappedDevice | undefined, card: string, grants?: readonly Grant[]): TapContext {
    const now = deps.cloudTime?.cloudNow() ?? deps.clock.now();
    const location = deps.registry.location;
    if (!device)
      return {
        card,
        now,
        device: null,
        rfidParking: false,
        grants: grants ?? [],
        occupancy: { locked: null, parkedBy: null },
        booking: null,
      };
    const latch = deps.sensors.get(device.device_id).latch;
    const booking = bookings.active(device.device_id, now);
    return {
      card,
      now,
      device: { device_id: device.device_id, type: device.type, location_id: location?.id ?? null },
      rfidParking: location?.rfid_parking ?? false,
      grants: grants ?? keys.grantsFor(card),
      occupancy: {
        locked: latch === null ? null : latch === "locked",
        parkedBy: parkedCards.get(device.device_id),
      },
      booking: booking ? { holder: booking.holder } : null,
    };
  }

  /** Whether `context` now judges on the wall clock: the gateway has not heard the cloud's time. */
  const onWallClock = () => !deps.cloudTime?.cloudNow();

  async function decide(
    alias: string,
    card: string,
  ): Promise<{
    device: MappedDevice | undefined;
    decision: TapDecision;
    by: "local" | "cloud";
    wall: boolean;
  }> {
    let device = deps.registry.byAliasName(alias);
    const local = decideTap(context(device, card));
    const wall = onWallClock();
    if (local.reason !== "unknown_card") return { device, decision: local, by: "local", wall };
    const answered = await deps.askCloud(card, device?.device_id ?? null);
    if (answered === null)
      return {
        device,
        decision: { granted: false, action: "none", reason: "offline_unknown", whitelist_id: null },
        by: "local",
        wall: false,
      };
    // The world may have moved while we waited (a new map, a latch): decide on what holds now.
    device = deps.registry.byAliasName(alias);
    const decision = decideTap(context(device, card, answered));
    return { device, decision, by: "cloud", wall: onWallClock() };
  }

  async function actuate(device: MappedDevice, action: "lock" | "unlock"): Promise<Outcome> {
    // A tap is the local interaction that wakes a LOCAL_WAKEUP device (spec: power_save_strategy): it is
    // awake before it is moved, so nothing waits for the board to say so.
    deps.sleep?.record(device, "", "tap");
    try {
      return await deps.actuator.run(device, action);
    } catch (err) {
      const reason = `gateway error: ${err instanceof Error ? err.message : String(err)}`;
      return { ok: false, reason, lockState: null, sensors: null };
    }
  }

  /**
   * Who parked what: only this card retrieves what it parked, and any unlock ends the parking. A device
   * locked is in use, so its booking (which only a master key parks past) is over, as with a lock command.
   */
  function noteParking(device: MappedDevice, action: "lock" | "unlock", card: string) {
    if (isDoor(device)) return;
    if (action === "unlock") return void parkedCards.clear(device.device_id);
    parkedCards.put(device.device_id, card, deps.clock.now().toISOString());
    bookings.clear(device.device_id);
  }

  /** `write`, or null when the store is full (SQLITE_FULL): then the tap is refused and nothing moves. */
  function journalOrRefuse<T>(write: () => T): T | null {
    try {
      return write();
    } catch (err) {
      if (!isStoreFull(err) || !deps.storeSpace) throw err;
      return null;
    }
  }

  /** The refusal of a tap the store could not journal: owed to the cloud until it can be. */
  function refusedFull(draft: AccessDraft): AccessDecision {
    const refusal = {
      ...draft,
      granted: false,
      action: "none",
      reason: STORE_FULL_TAP,
      actuated: null,
    } as const;
    deps.storeSpace?.refused(refusal, { reader: draft.reader, card: maskCardId(draft.card_id) });
    return { ...refusal, gateway_id: "", seq: 0, observed_at: draft.observed_at } as AccessDecision;
  }

  async function handle(reader: string, alias: string, card: string): Promise<AccessDecision> {
    const tappedAt = deps.clock.now();
    const cloudAt = deps.cloudTime?.cloudNow();
    const { device, decision, by, wall } = await decide(alias, card);
    const draft: AccessDraft = {
      type: "access_decision",
      observed_at: tappedAt.toISOString(),
      ...(cloudAt ? { observed_cloud_at: cloudAt.toISOString() } : {}),
      reader,
      device_id: device?.device_id ?? null,
      card_id: card,
      granted: decision.granted,
      action: decision.action,
      reason: decision.reason,
      whitelist_id: decision.whitelist_id,
      decided_by: by,
      // A card's expiry judged on the gateway's own clock: the access log says so.
      ...(wall ? { judged_on_wall_clock: true } : {}),
    };
    const action = decision.action;
    let msg: AccessDecision;
    let failure: string | null = null;
    if (!device || action === "none") {
      const journaled = journalOrRefuse(() => outbox.append({ ...draft, actuated: null }));
      if (!journaled) return refusedFull(draft);
      msg = journaled as AccessDecision;
    } else {
      // Recorded before the hardware moves (F2): a crash from here on still leaves the decision behind.
      const pending = journalOrRefuse(() => tapJournal.begin(draft));
      if (pending === null) return refusedFull(draft);
      const outcome = await actuate(device, action);
      if (!outcome.ok) failure = outcome.reason;
      msg = deps.store.atomically(() => {
        tapJournal.end(pending);
        if (outcome.ok) noteParking(device, action, card);
        const appended = outbox.append({
          ...draft,
          reason: outcome.ok ? decision.reason : "actuation_failed",
          actuated: outcome.ok,
        });
        // Where the latch went: the cloud's state follows the gateway's sensor reports (flow 6). A door
        // released again restarts its window, so the cloud hears of it even though the latch reads the same.
        if (outcome.sensors)
          deps.sensors.record(device, outcome.sensors, "tap", {
            always: isDoor(device) && action === "unlock",
          });
        return appended as AccessDecision;
      });
    }
    deps.log.info(
      {
        card: maskCardId(card),
        reader,
        device: alias,
        granted: msg.granted,
        reason: msg.reason,
        decided_by: by,
        action: msg.action,
        actuated: msg.actuated,
        ...(failure ? { failure } : {}),
        ms: deps.clock.now().getTime() - tappedAt.getTime(),
      },
      "access decided",
    );
    deps.onDecided?.(msg);
    return msg;
  }

  return {
    /** Decides one tap on `reader`, which serves the device `alias`; resolves with what went to the outbox. */
    handle(reader: string, alias: string, card: string): Promise<AccessDecision> {
      const key = deps.registry.byAliasName(alias)?.device_id ?? `reader:${reader}`;
      return turns.run(key, () => handle(reader, alias, card));
    },

    /**
     * Decisions the last run began to actuate and never recorded the outcome of (F2): reported with
     * `actuated: null`, the outcome unknown. A locker it was parking counts as parked by that card; the
     * latch read at start-up ends the parking if the lock never happened.
     */
    recoverInterrupted(): number {
      const open = tapJournal.unfinished();
      for (const { id, draft } of open)
        deps.store.atomically(() => {
          tapJournal.end(id);
          const device = draft.device_id ? deps.registry.get(draft.device_id) : undefined;
          if (device && draft.action === "lock") noteParking(device, "lock", draft.card_id);
          outbox.append({ ...draft, actuated: null });
        });
      return open.length;
    },
  };
}

export type TapHandler = ReturnType<typeof createTapHandler>;
