/**
 * Payloads of the gateway ⇄ cloud wire, one zod schema each, validated on receipt by both ends
 * (ARCHITECTURE: Wire principles). JSON keys are snake_case like the public API.
 */
import { z } from "zod";
import { COMMAND_NAMES } from "../domain/device-types.ts";

const Timestamp = z.iso.datetime({ offset: true });

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
});
export type CommandRequest = z.infer<typeof CommandRequest>;

/** Common fields of every up-going message that travels through the gateway's durable outbox. */
const OutboxFields = {
  gateway_id: z.string(),
  /** Per-gateway monotonic sequence number: the cloud applies each (gateway_id, seq) once. */
  seq: z.number().int().positive(),
  /** RFC 3339, from the side that observed the fact. */
  observed_at: Timestamp,
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
  ]),
  /** Who caused it and why, for actions a technician took on site. */
  detail: z.string().max(500).default(""),
});
export type HardwareEvent = z.infer<typeof HardwareEvent>;

/** Up, `up` channel, QoS 1: anything from the outbox. */
export const UpMessage = z.discriminatedUnion("type", [CommandProgress, DeviceStateReport, HardwareEvent]);
export type UpMessage = z.infer<typeof UpMessage>;
/** An up message as written, before its schema fills in defaults. */
export type UpMessageInput = z.input<typeof UpMessage>;

/** Down, `ack`: the sequence numbers the cloud has applied (so the gateway may delete them). */
export const Ack = z.object({
  seqs: z.array(z.number().int().positive()).max(1000),
  /**
   * Set when the cloud has just (re)subscribed: whatever the gateway sent meanwhile may have found no
   * subscriber, so it sends every unconfirmed row again now rather than at its next periodic resend.
   */
  resend: z.boolean().optional(),
});
export type Ack = z.infer<typeof Ack>;

/** Up, `hb`, QoS 0, never queued: the gateway and every bus device it reached. */
export const Heartbeat = z.object({
  gateway_id: z.string(),
  sent_at: Timestamp,
  devices: z.array(z.object({ device_id: z.uuid(), reachable: z.boolean() })).max(1000),
});
export type Heartbeat = z.infer<typeof Heartbeat>;

/** Down, `config`, retained: the devices this gateway drives and where it reaches them. */
export const DeviceMap = z.object({
  gateway_id: z.string(),
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
      }),
    )
    .max(1000),
});
export type DeviceMap = z.infer<typeof DeviceMap>;

/** Up, `status`, retained; the offline form is also the Last Will. */
export const Status = z.object({ gateway_id: z.string(), online: z.boolean(), at: Timestamp });
export type Status = z.infer<typeof Status>;
