/**
 * Payloads of the gateway ⇄ cloud wire, one zod schema each, validated on receipt by both ends
 * (ARCHITECTURE: Wire principles). JSON keys are snake_case like the public API.
 * On `zod/mini` (./zod-english.ts): the daemon loads no classic zod. Those parsed in volume are parsed with
 * their compiled parser (./compiled.ts, docs/decisions/gateway-memory.md).
 */

import * as z from "zod/mini";
import { COMMAND_NAMES } from "../domain/device-types.ts";
import "./zod-english.ts";
import { SentAt, Timestamp, WireCardId } from "./fields.ts";

export { WireCardId } from "./fields.ts";
export * from "./keys.ts";

/** Down, `cmd`, QoS 1. The command id is the idempotency key end to end. */
export const CommandRequest = z.object({
  command_id: z.uuid(),
  device_id: z.uuid(),
  name: z.enum(COMMAND_NAMES),
  params: z._default(
    z.object({
      power_cycle: z.optional(z.boolean()),
      reason: z.optional(z.string()),
      comment: z.optional(z.string()),
      /**
       * book only: who holds the booking (the API caller's id) and when it ends. The gateway keeps it in
       * its store so local access can honour it; cancel-booking and force-cancel-booking end it.
       */
      booking: z.optional(
        z.object({ holder: z.string().check(z.minLength(1), z.maxLength(200)), until: Timestamp }),
      ),
    }),
    {},
  ),
  issued_at: Timestamp,
  /** The gateway never actuates a command after this instant (S31, F7). */
  expires_at: Timestamp,
  /**
   * The command this one takes over (a force command): if the gateway has not started it yet it never
   * will, and if it has not even arrived it is refused when it does.
   */
  supersedes: z.optional(z.uuid()),
  /** Stamped at each publish, resends included. */
  ...SentAt,
});
export type CommandRequest = z.infer<typeof CommandRequest>;

/**
 * A gateway store's outbox identity: a random UUID made once with the store, so a store that was lost and
 * made again (its seq starting over at 1) is told from the one before it (docs/decisions/wire.md).
 */
export const OutboxId = z.uuid();

/** Common fields of every up-going message that travels through the gateway's durable outbox. */
const OutboxFields = {
  gateway_id: z.string(),
  /**
   * The outbox the message was numbered in. Optional: absent (older gateways, and rows written before the
   * store had an identity) dedups as the empty identity.
   */
  outbox_id: z.optional(OutboxId),
  /** Monotonic within its outbox: the cloud applies each (gateway_id, outbox_id, seq) once. */
  seq: z.int().check(z.positive()),
  /** RFC 3339, from the side that observed the fact: the gateway's own wall clock, kept as data. */
  observed_at: Timestamp,
  /**
   * The same instant on the cloud's clock as the gateway estimated it (docs/decisions/clock.md), which the
   * cloud records as the fact's time; absent before the gateway had heard the cloud's time, and from older
   * gateways.
   */
  observed_cloud_at: z.optional(Timestamp),
};

export const CommandProgress = z.object({
  ...OutboxFields,
  type: z.literal("command_progress"),
  command_id: z.uuid(),
  device_id: z.uuid(),
  state: z.enum(["RECEIVED", "SUCCESS", "ERROR"]),
  reason: z._default(z.string().check(z.maxLength(500)), ""),
  /** Physical lock state after the command, when the hardware reported it. */
  lock_state: z.optional(z.enum(["LOCKED", "UNLOCKED"])),
  /**
   * On an ERROR: the gateway refused because someone else holds the device (a card parked the locker), so
   * the `lock_state` it carries is theirs and the command's rider holds nothing.
   */
  held_by_another: z.optional(z.boolean()),
});
export type CommandProgress = z.infer<typeof CommandProgress>;

/** Why the gateway read or reports a device's sensors (kept with the state change it causes). */
export const SENSOR_CAUSES = [
  /** The daemon started and read the hardware. */
  "startup",
  /** A bus or board came back (reopened, powered up again) and was read again. */
  "board_back",
  /** A new device map made this gateway drive the device (or drive it differently). */
  "device_map",
  /** The cloud's sync-device command. */
  "sync",
  /** The periodic sweep found a change no event reported. */
  "sweep",
  /** The hardware reported a change on its own: a hand-turned latch, a door, an item. */
  "hardware_event",
  /** A technician acted through parkctl; `detail` says who and why. */
  "technician",
  /** The gateway locked a door again because it closed or its release window ran out. */
  "door_relock",
  /** A card tap on a reader moved the device (the `access_decision` before it says why). */
  "tap",
] as const;
export type SensorCause = (typeof SENSOR_CAUSES)[number];

/**
 * The physical state the gateway observed (ARCHITECTURE flow 6: the hardware is the truth). The cloud
 * keeps it as the device's `lock_state` and reconciles `state` with it outside a command in flight.
 */
export const DeviceStateReport = z.object({
  ...OutboxFields,
  type: z.literal("device_state"),
  device_id: z.uuid(),
  lock_state: z.optional(z.enum(["LOCKED", "UNLOCKED"])),
  door_open: z.optional(z.boolean()),
  item_present: z.optional(z.boolean()),
  sleep_state: z.optional(z.enum(["", "LIGHT_SLEEP", "DEEP_SLEEP"])),
  cause: z._default(z.enum(SENSOR_CAUSES), "hardware_event"),
  /** Who and why, for a technician's action. */
  detail: z._default(z.string().check(z.maxLength(500)), ""),
});
export type DeviceStateReport = z.infer<typeof DeviceStateReport>;

/** Something the hardware reported on its own: a door opened, a latch jammed, the case opened. */
export const HardwareEvent = z.object({
  ...OutboxFields,
  type: z.literal("hardware_event"),
  /** The device the event is about, when it maps to one (a board reset concerns the whole board). */
  device_id: z.nullable(z.uuid()),
  source: z.string().check(z.maxLength(100), z.describe("bus/board/channel or reader id")),
  event: z.enum([
    "door_opened",
    "door_closed",
    "jammed",
    "tamper",
    "item_inserted",
    "item_removed",
    "reset",
    "latch_locked",
    "latch_unlocked",
    "reader_lost",
    "reader_back",
    "bus_lost",
    "bus_back",
    /** A door stayed open for the gateway's door_held_open_s (5 min by default): a `status` webhook. */
    "door_held_open",
  ]),
  /** Who caused it and why, for actions a technician took on site. */
  detail: z._default(z.string().check(z.maxLength(500)), ""),
});
export type HardwareEvent = z.infer<typeof HardwareEvent>;

/**
 * What a tap on a reader led to (ARCHITECTURE flow 2), decided locally first or asked of the cloud. It goes
 * up whatever the outcome, refusals included; the device's sensors follow as `device_state` reports.
 */
export const AccessDecision = z.object({
  ...OutboxFields,
  type: z.literal("access_decision"),
  reader: z.string().check(z.maxLength(100)),
  /** The device the reader serves; null when the reader is mapped to no known device. */
  device_id: z.nullable(z.uuid()),
  card_id: WireCardId,
  granted: z.boolean(),
  /** What the gateway did about it. */
  action: z.enum(["unlock", "lock", "none"]),
  /**
   * Why, in one word: whitelisted, master_key, parked (an rfid_parking lock for this card), retrieved
   * (the same card unlocked it), unknown_card, inactive, expired, not_targeted, occupied, booked,
   * no_rfid_parking (a free locker where the location has no rfid_parking), unknown_state (a locker whose
   * latch the gateway has not read yet), asleep, offline_unknown, no_device, actuation_failed (granted, but
   * the hardware did not do it). shared/domain/access-decision.ts decides them.
   */
  reason: z.string().check(z.maxLength(40)),
  /** The whitelist whose grant decided it (null when none did). */
  whitelist_id: z.nullable(z.uuid()),
  decided_by: z.enum(["local", "cloud"]),
  /**
   * The actuation's outcome when there was one (false: the hardware did not do it). Null: nothing to
   * actuate, or, for a granted lock or unlock, the gateway stopped before it knew (F2).
   */
  actuated: z.nullable(z.boolean()),
  /**
   * True when the gateway had not heard the cloud's time when it decided, so a card's expiry and a booking's
   * end were judged on its own wall clock (docs/decisions/clock.md); absent otherwise and from older gateways.
   */
  judged_on_wall_clock: z.optional(z.boolean()),
});
export type AccessDecision = z.infer<typeof AccessDecision>;

/** Photo formats the gateway sends and the cloud serves (image types only: never anything a browser runs). */
export const PHOTO_MIME_TYPES = ["image/jpeg", "image/png"] as const;
/**
 * Raw bytes per `photo` part: base64 makes it 128 KiB, so each message stays well under the broker's
 * 256 KB packet limit (cloud/gateway-link/broker-limits.ts). A multiple of 3, so parts encode alone.
 */
export const PHOTO_PART_BYTES = 96 * 1024;
/** Parts per photo at most: 64 × 96 KiB = 6 MiB, far above a snapshot camera's JPEG. */
export const PHOTO_MAX_PARTS = 64;

/**
 * One part of the photo a take-photo command took (docs/decisions/photos.md). All parts commit to the
 * outbox with the command's SUCCESS; the cloud assembles the photo once every part has arrived, in
 * whatever order, before or after the SUCCESS.
 */
export const PhotoPart = z.object({
  ...OutboxFields,
  type: z.literal("photo"),
  command_id: z.uuid(),
  device_id: z.uuid(),
  /** 1-based. */
  part: z.int().check(z.positive(), z.maximum(PHOTO_MAX_PARTS)),
  parts: z.int().check(z.positive(), z.maximum(PHOTO_MAX_PARTS)),
  mime: z.enum(PHOTO_MIME_TYPES),
  /** This part's bytes, base64 (at most PHOTO_PART_BYTES of them). */
  data: z.base64().check(z.maxLength(Math.ceil(PHOTO_PART_BYTES / 3) * 4)),
});
export type PhotoPart = z.infer<typeof PhotoPart>;

/** Up, `up` channel, QoS 1: anything from the outbox. */
export const UpMessage = z.discriminatedUnion("type", [
  CommandProgress,
  DeviceStateReport,
  HardwareEvent,
  AccessDecision,
  PhotoPart,
]);
export type UpMessage = z.infer<typeof UpMessage>;
/** An up message as written, before its schema fills in defaults. */
export type UpMessageInput = z.input<typeof UpMessage>;

/** Down, `ack`: the sequence numbers the cloud has applied (so the gateway may delete them). */
export const Ack = z.object({
  seqs: z.array(z.int().check(z.positive())).check(z.maxLength(1000)),
  /**
   * The outbox these seqs were numbered in, echoed from the up message ("": it carried none). A gateway
   * confirms only its rows of that identity, so a late ack meant for the store it had before its state was
   * lost confirms nothing. Absent (a cloud that predates outbox identities): rows are confirmed by seq alone.
   */
  outbox_id: z.optional(z.union([OutboxId, z.literal("")])),
  /**
   * Set when the cloud has just (re)subscribed: whatever the gateway sent meanwhile may have found no
   * subscriber, so it sends every unconfirmed row again now rather than at its next periodic resend.
   */
  resend: z.optional(z.boolean()),
  /**
   * Echoes the `sync` of the gateway's `online` status: this ack was sent after the cloud heard this very
   * session announced, so its `sent_at` is fresh (not a copy the broker kept while the gateway was away).
   */
  sync: z.optional(z.string().check(z.maxLength(64))),
  ...SentAt,
});
export type Ack = z.infer<typeof Ack>;

/** Up, `hb`, QoS 0, never queued: the gateway and every bus device it reached. */
export const Heartbeat = z.object({
  gateway_id: z.string(),
  sent_at: Timestamp,
  devices: z.array(z.object({ device_id: z.uuid(), reachable: z.boolean() })).check(z.maxLength(1000)),
  /**
   * The gateway's outbox and the lowest seq it may still send: every seq below `unconfirmed_from` was
   * confirmed and deleted, and is never sent again, so the cloud may forget it (docs/decisions/wire.md).
   * Absent from older gateways, whose dedup rows are then kept. `depth`: how many rows it holds that the
   * cloud has not confirmed (absent from older gateways).
   */
  outbox: z.optional(
    z.object({
      id: OutboxId,
      unconfirmed_from: z.int().check(z.positive()),
      depth: z.optional(z.int().check(z.nonnegative())),
    }),
  ),
  /** The daemon's package version and its start on its own wall clock. Absent from older gateways. */
  runtime: z.optional(
    z.object({ version: z.string().check(z.minLength(1), z.maxLength(64)), started_at: Timestamp }),
  ),
  /**
   * The gateway's wall clock against its estimate of the cloud's (estimate minus wall clock; positive: the
   * gateway's clock is behind), and whether that is beyond the bound. Absent before the gateway has heard the
   * cloud's time, and from older gateways.
   */
  clock: z.optional(z.object({ offset_ms: z.number(), skewed: z.boolean() })),
  /**
   * The gateway's state disk: free bytes, and whether its store is full (what it cannot journal it refuses):
   * the cloud's `storage_full` alarm. Absent from older gateways.
   */
  storage: z.optional(z.object({ free_bytes: z.number().check(z.nonnegative()), full: z.boolean() })),
  /** A probe: the cloud echoes it on an `ack` at once, a round trip that bounds its time from above. */
  sync: z.optional(z.string().check(z.maxLength(64))),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/** Down, `config`, retained: the devices this gateway drives and where it reaches them. */
export const DeviceMap = z.object({
  gateway_id: z.string(),
  /** The location the gateway serves and what local access may do there (absent from older clouds). */
  location: z.optional(z.object({ id: z.uuid(), rfid_parking: z.boolean() })),
  /** Changes whenever the map does, so a gateway can tell a new map from a redelivery. */
  version: z.string(),
  devices: z
    .array(
      z.object({
        device_id: z.uuid(),
        type: z.string(),
        alias: z.string(),
        bus: z.nullable(z.object({ board: z.int(), channel: z.int() })),
        has_camera: z._default(z.boolean(), false),
        /** Absent: NONE (always on). */
        power_save_strategy: z.optional(z.enum(["NONE", "REMOTE_WAKEUP", "LOCAL_WAKEUP"])),
      }),
    )
    .check(z.maxLength(1000)),
  /** Retained: a copy may be old when it arrives, which still bounds the cloud's time from below. */
  ...SentAt,
});
export type DeviceMap = z.infer<typeof DeviceMap>;

/** Up, `status`, retained; the offline form is also the Last Will. */
export const Status = z.object({
  gateway_id: z.string(),
  online: z.boolean(),
  at: Timestamp,
  /** A token new with each session; the cloud echoes it on an `ack` so the gateway knows that ack is fresh. */
  sync: z.optional(z.string().check(z.maxLength(64))),
});
export type Status = z.infer<typeof Status>;
