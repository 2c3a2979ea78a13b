/**
 * Payloads of the gateway ⇄ cloud wire, one zod schema each, validated on receipt by both ends
 * (ARCHITECTURE: Wire principles). JSON keys are snake_case like the public API.
 */
import { z } from "zod";
import { COMMAND_NAMES } from "../domain/device-types.ts";

const Timestamp = z.iso.datetime({ offset: true });

/**
 * The cloud's clock when it published a down message (docs/decisions/clock.md): the gateway learns the
 * cloud's time from it and never judges a cloud deadline by its own wall clock. Optional: older clouds
 * send none.
 */
const SentAt = { sent_at: Timestamp.optional() };

/** Down, `cmd`, QoS 1. The command id is the idempotency key end to end. */
export const CommandRequest = z.object({
  command_id: z.uuid(),
  device_id: z.uuid(),
  name: z.enum(COMMAND_NAMES),
  params: z
    .object({
      power_cycle: z.boolean().optional(),
      reason: z.string().optional(),
      comment: z.string().optional(),
      /**
       * book only: who holds the booking (the API caller's id) and when it ends. The gateway keeps it in
       * its store so local access can honour it; cancel-booking and force-cancel-booking end it.
       */
      booking: z.object({ holder: z.string().min(1).max(200), until: Timestamp }).optional(),
    })
    .default({}),
  issued_at: Timestamp,
  /** The gateway never actuates a command after this instant (S31, F7). */
  expires_at: Timestamp,
  /**
   * The command this one takes over (a force command): if the gateway has not started it yet it never
   * will, and if it has not even arrived it is refused when it does.
   */
  supersedes: z.uuid().optional(),
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
  outbox_id: OutboxId.optional(),
  /** Monotonic within its outbox: the cloud applies each (gateway_id, outbox_id, seq) once. */
  seq: z.number().int().positive(),
  /** RFC 3339, from the side that observed the fact: the gateway's own wall clock, kept as data. */
  observed_at: Timestamp,
  /**
   * The same instant on the cloud's clock as the gateway estimated it (docs/decisions/clock.md), which the
   * cloud records as the fact's time; absent before the gateway had heard the cloud's time, and from older
   * gateways.
   */
  observed_cloud_at: Timestamp.optional(),
};

export const CommandProgress = z.object({
  ...OutboxFields,
  type: z.literal("command_progress"),
  command_id: z.uuid(),
  device_id: z.uuid(),
  state: z.enum(["RECEIVED", "SUCCESS", "ERROR"]),
  reason: z.string().max(500).default(""),
  /** Physical lock state after the command, when the hardware reported it. */
  lock_state: z.enum(["LOCKED", "UNLOCKED"]).optional(),
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
  lock_state: z.enum(["LOCKED", "UNLOCKED"]).optional(),
  door_open: z.boolean().optional(),
  item_present: z.boolean().optional(),
  sleep_state: z.enum(["", "LIGHT_SLEEP", "DEEP_SLEEP"]).optional(),
  cause: z.enum(SENSOR_CAUSES).default("hardware_event"),
  /** Who and why, for a technician's action. */
  detail: z.string().max(500).default(""),
});
export type DeviceStateReport = z.infer<typeof DeviceStateReport>;

/** Something the hardware reported on its own: a door opened, a latch jammed, the case opened. */
export const HardwareEvent = z.object({
  ...OutboxFields,
  type: z.literal("hardware_event"),
  /** The device the event is about, when it maps to one (a board reset concerns the whole board). */
  device_id: z.uuid().nullable(),
  source: z.string().max(100).describe("bus/board/channel or reader id"),
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
  detail: z.string().max(500).default(""),
});
export type HardwareEvent = z.infer<typeof HardwareEvent>;

/** A card id on the wire (spec: Whitelist entity id): lowercase hex, even length, at most 20 characters. */
export const WireCardId = z.string().regex(/^(?:[0-9a-f]{2}){1,10}$/, "lowercase hex, even length, ≤ 20");

/**
 * What a tap on a reader led to (ARCHITECTURE flow 2), decided locally first or asked of the cloud. It goes
 * up whatever the outcome, refusals included; the device's sensors follow as `device_state` reports.
 */
export const AccessDecision = z.object({
  ...OutboxFields,
  type: z.literal("access_decision"),
  reader: z.string().max(100),
  /** The device the reader serves; null when the reader is mapped to no known device. */
  device_id: z.uuid().nullable(),
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
  reason: z.string().max(40),
  /** The whitelist whose grant decided it (null when none did). */
  whitelist_id: z.uuid().nullable(),
  decided_by: z.enum(["local", "cloud"]),
  /**
   * The actuation's outcome when there was one (false: the hardware did not do it). Null: nothing to
   * actuate, or, for a granted lock or unlock, the gateway stopped before it knew (F2).
   */
  actuated: z.boolean().nullable(),
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
  part: z.number().int().positive().max(PHOTO_MAX_PARTS),
  parts: z.number().int().positive().max(PHOTO_MAX_PARTS),
  mime: z.enum(PHOTO_MIME_TYPES),
  /** This part's bytes, base64 (at most PHOTO_PART_BYTES of them). */
  data: z.base64().max(Math.ceil(PHOTO_PART_BYTES / 3) * 4),
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
  seqs: z.array(z.number().int().positive()).max(1000),
  /**
   * The outbox these seqs were numbered in, echoed from the up message ("": it carried none). A gateway
   * confirms only its rows of that identity, so a late ack meant for the store it had before its state was
   * lost confirms nothing. Absent (a cloud that predates outbox identities): rows are confirmed by seq alone.
   */
  outbox_id: z.union([OutboxId, z.literal("")]).optional(),
  /**
   * Set when the cloud has just (re)subscribed: whatever the gateway sent meanwhile may have found no
   * subscriber, so it sends every unconfirmed row again now rather than at its next periodic resend.
   */
  resend: z.boolean().optional(),
  /**
   * Echoes the `sync` of the gateway's `online` status: this ack was sent after the cloud heard this very
   * session announced, so its `sent_at` is fresh (not a copy the broker kept while the gateway was away).
   */
  sync: z.string().max(64).optional(),
  ...SentAt,
});
export type Ack = z.infer<typeof Ack>;

/** Up, `hb`, QoS 0, never queued: the gateway and every bus device it reached. */
export const Heartbeat = z.object({
  gateway_id: z.string(),
  sent_at: Timestamp,
  devices: z.array(z.object({ device_id: z.uuid(), reachable: z.boolean() })).max(1000),
  /**
   * The gateway's outbox and the lowest seq it may still send: every seq below `unconfirmed_from` was
   * confirmed and deleted, and is never sent again, so the cloud may forget it (docs/decisions/wire.md).
   * Absent from older gateways, whose dedup rows are then kept. `depth`: how many rows it holds that the
   * cloud has not confirmed (absent from older gateways).
   */
  outbox: z
    .object({ id: OutboxId, unconfirmed_from: z.int().positive(), depth: z.int().nonnegative().optional() })
    .optional(),
  /** The daemon's package version and its start on its own wall clock. Absent from older gateways. */
  runtime: z.object({ version: z.string().min(1).max(64), started_at: Timestamp }).optional(),
  /**
   * The gateway's wall clock against its estimate of the cloud's (estimate minus wall clock; positive: the
   * gateway's clock is behind), and whether that is beyond the bound. Absent before the gateway has heard the
   * cloud's time, and from older gateways.
   */
  clock: z.object({ offset_ms: z.number(), skewed: z.boolean() }).optional(),
  /**
   * The gateway's state disk: free bytes, and whether its store is full (what it cannot journal it refuses):
   * the cloud's `storage_full` alarm. Absent from older gateways.
   */
  storage: z.object({ free_bytes: z.number().nonnegative(), full: z.boolean() }).optional(),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/** Down, `config`, retained: the devices this gateway drives and where it reaches them. */
export const DeviceMap = z.object({
  gateway_id: z.string(),
  /** The location the gateway serves and what local access may do there (absent from older clouds). */
  location: z.object({ id: z.uuid(), rfid_parking: z.boolean() }).optional(),
  /** Changes whenever the map does, so a gateway can tell a new map from a redelivery. */
  version: z.string(),
  devices: z
    .array(
      z.object({
        device_id: z.uuid(),
        type: z.string(),
        alias: z.string(),
        bus: z.object({ board: z.number().int(), channel: z.number().int() }).nullable(),
        has_camera: z.boolean().default(false),
        /** Absent: NONE (always on). */
        power_save_strategy: z.enum(["NONE", "REMOTE_WAKEUP", "LOCAL_WAKEUP"]).optional(),
      }),
    )
    .max(1000),
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
  sync: z.string().max(64).optional(),
});
export type Status = z.infer<typeof Status>;

// ── Keys: the keys_only whitelist cache (ARCHITECTURE flow 4) ─────────────────────────────────────────

/**
 * One card's grant through one whitelist, reduced to what this gateway's decisions need: the whitelist's
 * keys_only targets at the gateway's location (the location itself and/or some of its devices).
 */
export const Grant = z.object({
  card_id: WireCardId,
  whitelist_id: z.uuid(),
  status: z.enum(["ACTIVE", "INACTIVE"]),
  expires_at: Timestamp.nullable(),
  is_master_key: z.boolean(),
  /** Location ids targeted (the gateway's own location, when the whitelist targets it). */
  location_ids: z.array(z.uuid()).max(100),
  /** Device ids targeted, among this gateway's devices. */
  device_ids: z.array(z.uuid()).max(1000),
});
export type Grant = z.infer<typeof Grant>;

export const GrantKey = z.object({ card_id: WireCardId, whitelist_id: z.uuid() });
export type GrantKey = z.infer<typeof GrantKey>;

/** Grants per snapshot part: a part stays well under the broker's 256 KB packet limit. */
export const SNAPSHOT_PART_SIZE = 1000;

/**
 * Down, `keys`, QoS 1. A delta applies only on top of `base_version` (else the gateway reports its version
 * and gets a snapshot); a snapshot replaces the whole cache once all its parts have arrived; an answer
 * replies to a `query` for a card the gateway does not hold.
 */
export const KeysDown = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("delta"),
    gateway_id: z.string(),
    base_version: z.number().int().nonnegative(),
    version: z.number().int().positive(),
    upserts: z.array(Grant).max(SNAPSHOT_PART_SIZE),
    removals: z.array(GrantKey).max(SNAPSHOT_PART_SIZE),
    ...SentAt,
  }),
  z.object({
    kind: z.literal("snapshot"),
    gateway_id: z.string(),
    version: z.number().int().nonnegative(),
    /** 1-based; parts of one snapshot share its version. */
    part: z.number().int().positive(),
    parts: z.number().int().positive(),
    grants: z.array(Grant).max(SNAPSHOT_PART_SIZE),
    ...SentAt,
  }),
  z.object({
    kind: z.literal("answer"),
    gateway_id: z.string(),
    query_id: z.uuid(),
    card_id: WireCardId,
    /** The card's grants at this gateway's location, keys_only or not; empty: unknown here. */
    grants: z.array(Grant).max(100),
    ...SentAt,
  }),
]);
export type KeysDown = z.infer<typeof KeysDown>;

/**
 * Up, `keys_report`, QoS 1, not queued (both are worthless later and are sent again): the version the gateway
 * holds (on connect, after applying, on a delta it cannot apply), and a question about a card it does not
 * hold, asked while connected only.
 */
export const KeysUp = z.discriminatedUnion("kind", [
  z.object({ kind: z.literal("version"), gateway_id: z.string(), version: z.number().int().nonnegative() }),
  z.object({
    kind: z.literal("query"),
    gateway_id: z.string(),
    query_id: z.uuid(),
    card_id: WireCardId,
    device_id: z.uuid().nullable(),
  }),
]);
export type KeysUp = z.infer<typeof KeysUp>;
