/**
 * The gateway's ports, owned here and named in domain terms (STYLE principle 2). Features depend on these
 * interfaces only; adapters and the daemon's own parts implement them; only the composition root
 * (gateway.ts) knows both sides. The simulator's links and lines fit the serial and GPIO ports
 * structurally, so hardware-sim never imports the gateway. docs/decisions/ports.md lists where each
 * implementation lives.
 */
import type { Duplex } from "node:stream";
import type { SleepState } from "../shared/domain/device-types.ts";
import type { LatchState } from "../shared/protocol/lock-bus/messages.ts";
import type {
  AccessDecision,
  CommandRequest,
  DeviceMap,
  Grant,
  Heartbeat,
  KeysDown,
  KeysUp,
  SensorCause,
  UpMessage,
} from "../shared/wire/messages.ts";

/** Time is a port too, shared with the cloud: `now`, and timers a test's fake clock can fire. */
export type { Clock, TimerHandle } from "../shared/time/clock.ts";

// ── The outside world ────────────────────────────────────────────────────────────────────────────────

/**
 * A byte link to a serial device: serialport on a device path, a TCP socket, or an in-memory pair from the
 * simulator. Single use: after 'close' the factory is asked for a new one.
 */
export type SerialLink = Duplex & {
  /** serialport's close: unlike destroy(), it releases the device's lock, so the port can be reopened. */
  close?(callback?: (err: Error | null) => void): void;
  isOpen?: boolean;
};

/** Opens the link named by a path (a device path, `tcp://host:port`, or whatever the factory knows). */
export type SerialLinkFactory = (path: string, baudRate: number) => Promise<SerialLink>;

/** One GPIO line; values are logical (`true` = active, whatever the electrical level). */
export interface GpioLine {
  read(): boolean;
  /** Drives an output; throws for an input. */
  write(value: boolean): void;
  /** Calls back on every change; returns the unsubscribe function. */
  watch(onChange: (value: boolean) => void): () => void;
}

export interface GpioBank {
  /** The line configured under this name (e.g. "door_strike:north"); throws for an unknown name. */
  line(name: string): GpioLine;
  /** Lets go of every line: no watcher hears anything after this. */
  close(): void;
}

/** What the broker link reports. */
export type BrokerLinkEvents = {
  /** Subscribed and announced `online`: what waits for this gateway may arrive from now on. */
  connected: [];
  disconnected: [];
  command: [CommandRequest];
  /**
   * The cloud applied these outbox rows of outbox `outboxId` ('' : rows numbered without one; absent: a cloud
   * that names none); `resend` asks for everything unconfirmed again.
   */
  ack: [seqs: number[], resend: boolean, outboxId?: string];
  deviceMap: [DeviceMap];
  /** Whitelist sync for this gateway: a delta, a snapshot part, or the answer to a card query. */
  keys: [KeysDown];
  /**
   * A session (re)connected: copies the broker kept while the gateway was away may arrive first, their
   * `sent_at` old (docs/decisions/clock.md).
   */
  session: [];
  /**
   * The cloud's clock when it sent a down message (absent from older clouds), told before the message's own
   * event; `fresh`: the cloud's answer to this session's `online`.
   */
  cloudTime: [sentAt: string | undefined, fresh: boolean, echo?: string];
};

type BrokerListener<E extends keyof BrokerLinkEvents> = (...args: BrokerLinkEvents[E]) => void;

/**
 * The gateway's session with the cloud through an MQTT broker: QoS 1 up-messages, ephemeral heartbeats,
 * and validated down-messages as events. Reconnects by itself until stopped.
 */
export interface BrokerLink {
  readonly connected: boolean;
  /** When the current session was established (RFC 3339); null while disconnected. */
  readonly connectedSince: string | null;
  start(): void;
  /** Announces `offline` and disconnects. */
  stop(): Promise<void>;
  /** QoS 1 publish of an outbox message; resolves on the broker's acknowledgement. */
  publishUp(msg: UpMessage): Promise<void>;
  /** Fire and forget, only while connected (a late heartbeat is worthless); false when not sent. */
  publishHeartbeat(hb: Heartbeat): boolean;
  /**
   * QoS 1, only while connected, never queued for later (a version report or a card query is worthless
   * later, and is sent again when it matters); false when not sent.
   */
  publishKeysReport(msg: KeysUp): boolean;
  on<E extends keyof BrokerLinkEvents>(event: E, listener: BrokerListener<E>): unknown;
  off<E extends keyof BrokerLinkEvents>(event: E, listener: BrokerListener<E>): unknown;
}

/** The camera's ports (take-photo), in a module of their own. */
export type { Camera, Photo, PhotoStore } from "./camera-ports.ts";

// ── The gateway's store ──────────────────────────────────────────────────────────────────────────────

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** An outbox message before the outbox numbers it. */
export type Pending = DistributiveOmit<UpMessage, "seq" | "gateway_id" | "outbox_id" | "observed_at"> & {
  observed_at?: string;
};

export type OutboxRow = { seq: number; type: string; created_at: string };

/**
 * The durable outbox (ARCHITECTURE: wire principles): up-going messages that matter, numbered with the
 * gateway's sequence, kept until the cloud confirms them. Emits `appended` after each append.
 */
export interface Outbox {
  /** Durable once the outermost transaction commits (inside `atomically`, with the rest of it). */
  append(msg: Pending): UpMessage;
  /** Messages after `afterSeq`, oldest first. */
  pending(afterSeq?: number, limit?: number): UpMessage[];
  /**
   * Removes the rows the cloud confirmed — with `outboxId`, only rows of that outbox identity ('' : rows
   * written before the store had one), so an ack meant for an earlier store confirms nothing; returns how
   * many were still there.
   */
  confirm(seqs: number[], outboxId?: string): number;
  stats(): { pending: number; oldest: string | null };
  rows(limit?: number): OutboxRow[];
  on(event: "appended", listener: () => void): unknown;
  off(event: "appended", listener: () => void): unknown;
}

/**
 * Where the durable outbox stands, for heartbeats: the identity its messages carry (made with the store,
 * another for a store made again) and the lowest seq it may still send, so the cloud can forget the rest.
 */
export interface OutboxPosition {
  readonly id: string;
  /** Every seq below this was confirmed and deleted: it is never sent again. */
  unconfirmedFrom(): number;
  /** How many rows it holds (appended, not yet confirmed): kept as it changes, so reading it costs nothing. */
  depth(): number;
}

export type CommandState = "RECEIVED" | "SUCCESS" | "ERROR";

export type CommandLogEntry = {
  command_id: string;
  device_id: string;
  name: string;
  state: CommandState;
  reason: string;
  lock_state: "LOCKED" | "UNLOCKED" | null;
  received_at: string;
  finished_at: string | null;
};

/** A command as the log knows it: enough to report on it again. */
export type LoggedCommand = Pick<CommandLogEntry, "command_id" | "device_id" | "name">;

/** How a command ended: its outcome, why, the lock's reading when the hardware gave one, and when. */
export type CommandEnd = [
  commandId: string,
  state: "SUCCESS" | "ERROR",
  reason: string,
  lockState: string | null,
  at: string,
];

/** Which command ids this gateway has taken (the command id is the idempotency key) and how they ended. */
export interface CommandLog {
  get(commandId: string): CommandLogEntry | undefined;
  /** Records that the command was taken (RECEIVED) or refused outright (ERROR). */
  record(e: LoggedCommand & { state: CommandState; at: string }): void;
  finish(...end: CommandEnd): void;
  lastFor(deviceId: string): CommandLogEntry | undefined;
  /** Commands taken and never finished: the process stopped while they ran. */
  unfinished(): LoggedCommand[];
}

/** The last device map the cloud sent, so the gateway drives its hardware while the cloud is away. */
export interface DeviceMapStore {
  load(): DeviceMap | null;
  save(map: DeviceMap): void;
}

export type LocalAction = {
  at: string;
  who: string;
  why: string;
  device_alias: string;
  action: string;
  result: string;
};

/** What technicians do through parkctl: kept before it is done (result "started"), then `settle`d. */
export interface LocalActionLog {
  record(action: LocalAction): number;
  settle(id: number, result: string): void;
}

/** A device's booking as the cloud's book command made it: who holds it and until when (RFC 3339). */
export type Booking = {
  device_id: string;
  holder: string;
  until: string;
  /** The book command that made it. */
  command_id: string;
  booked_at: string;
};

/**
 * The bookings of this gateway's devices, so local access can honour them while the cloud is away. One per
 * device; a booking whose `until` has passed on the gateway's clock is over.
 */
export interface BookingStore {
  /** Records a booking, replacing the device's earlier one. */
  put(booking: Booking): void;
  /** Ends the device's booking; false when it had none. */
  clear(deviceId: string): boolean;
  /** The device's booking, unless it is over at `now`. */
  active(deviceId: string, now: Date): Booking | undefined;
  /** Every booking not over at `now`. */
  all(now: Date): Booking[];
  /** Deletes the bookings over at `now` and returns them. */
  clearExpired(now: Date): Booking[];
  /** When the first stored booking ends; null when there is none. */
  nextEnd(): string | null;
}

export type KeysDelta = Extract<KeysDown, { kind: "delta" }>;
export type KeysSnapshotPart = Extract<KeysDown, { kind: "snapshot" }>;

/**
 * The keys_only whitelist cache (ARCHITECTURE flow 4): the grants of the cards that may open this
 * gateway's devices, at the cloud's key version it holds, so taps are decided while the cloud is away.
 */
export interface KeyCache {
  /** The cloud's key version held (0: never synced). */
  version(): number;
  /** Grants held. */
  count(): number;
  /** One card's grants, by whitelist. */
  grantsFor(card: string): Grant[];
  /** Applies a delta in one transaction when its base is the held version; false (nothing changed) if not. */
  applyDelta(delta: KeysDelta): boolean;
  /**
   * Stages one part of a snapshot; when every part of its version has arrived, replaces the whole cache
   * in one transaction ("applied"). A part of another snapshot than the one staged discards the staging.
   */
  applySnapshotPart(part: KeysSnapshotPart): "staged" | "applied";
  /** Deletes grants expired at `now`; returns how many. */
  purgeExpired(now: Date): number;
}

/** Lockers and docks locked under rfid_parking, by the card that parked them. */
export interface ParkedCardStore {
  get(deviceId: string): string | null;
  put(deviceId: string, card: string, at: string): void;
  /** false when the device had no parked card. */
  clear(deviceId: string): boolean;
}

/** An access decision before its actuation's outcome is known. */
export type AccessDraft = Omit<AccessDecision, "gateway_id" | "seq" | "actuated">;

/**
 * Taps decided and being actuated (F2: no door opens without a record of the decision). A decision is
 * written here before the hardware moves, and leaves when its outcome goes to the outbox.
 */
export interface TapJournal {
  /** Records a decision about to be actuated; it survives a crash of the process. Returns its id. */
  begin(draft: AccessDraft): number;
  /** The decision's outcome is recorded (call inside that transaction). */
  end(id: number): void;
  /** Decisions begun and never ended: the process stopped between deciding and recording the outcome. */
  unfinished(): { id: number; draft: AccessDraft }[];
}

/** The gateway's durable state, one database. */
export interface GatewayStore {
  readonly outbox: Outbox & OutboxPosition;
  readonly commandLog: CommandLog;
  readonly bookings: BookingStore;
  readonly keys: KeyCache;
  readonly parkedCards: ParkedCardStore;
  readonly tapJournal: TapJournal;
  readonly deviceMaps: DeviceMapStore;
  readonly localActions: LocalActionLog;
  /** Runs `work` as one transaction: what it writes commits together or not at all. Nests. */
  atomically<T>(work: () => T): T;
  /** The database's own consistency check: "ok", or the first problem found. */
  checkIntegrity(): string;
  /** Whether the store answers at all (what the watchdog pings on). */
  isAnswering(): boolean;
  close(): void;
}

// ── Inside the daemon ────────────────────────────────────────────────────────────────────────────────

export type MappedDevice = DeviceMap["devices"][number];

/** The devices this gateway drives, from the cloud's latest device map. */
export interface DeviceDirectory {
  /** The map's version; null before the gateway has ever had one. */
  readonly version: string | null;
  /** The location the gateway serves and what local access may do there; null when the map has none. */
  readonly location: NonNullable<DeviceMap["location"]> | null;
  get(deviceId: string): MappedDevice | undefined;
  byAliasName(alias: string): MappedDevice | undefined;
  all(): MappedDevice[];
  /** The device wired to one channel of a board, if any. */
  onChannel(board: number, channel: number): MappedDevice | undefined;
  /** Devices behind one board. */
  onBoard(board: number): MappedDevice[];
}

/** What the gateway last read from a device's sensors; null where it has not read (or cannot). */
export type Sensors = {
  latch: LatchState | null;
  door_open: boolean | null;
  item_present: boolean | null;
  /** When any of them was last read or reported by the hardware. */
  read_at: string | null;
};

export type Reading = Partial<Omit<Sensors, "read_at">>;

/** The devices' live sensor picture, and the one place that tells the cloud of it (ARCHITECTURE flow 6). */
export interface SensorReadings {
  get(deviceId: string): Sensors;
  /** Since when (monotonic ms) the readings have shown the door open; null while closed or unknown. */
  openSince(deviceId: string): number | null;
  /** Records a reading; reports it when it tells the cloud something new (or `always`). */
  record(
    device: MappedDevice,
    reading: Reading,
    cause: SensorCause,
    opts?: { detail?: string; always?: boolean },
  ): boolean;
  /** Records what a command's own report already carries, so it is not reported twice. */
  note(device: MappedDevice, reading: Reading): void;
  /** Forgets a device: its next reading is reported whatever it says. */
  forget(deviceId: string): void;
}

export type Action = "lock" | "unlock" | "status" | "power_cycle";

export type Outcome = {
  ok: boolean;
  reason: string;
  lockState: "LOCKED" | "UNLOCKED" | null;
  /** What the hardware said about the device's sensors along the way (nothing when it did not answer). */
  sensors: Reading | null;
  /** The device's board heard the request and said nothing at all (no ACK, or no reply). */
  unanswered?: boolean;
};

/** Moves or reads one device's hardware, wherever it is wired. Failures are outcomes, not exceptions. */
export interface Actuator {
  /** `stillWanted` is asked right before a movement goes to the hardware: false, it does not. */
  run(device: MappedDevice, action: Action, opts?: { stillWanted?: () => boolean }): Promise<Outcome>;
}

/**
 * Devices' sleep states (spec: Device `sleep_state` and `power_save_strategy`) as the hardware last showed
 * them, and the one place that tells the cloud about them.
 */
export interface SleepStates {
  /** "" (awake), LIGHT_SLEEP or DEEP_SLEEP; null when the hardware has not shown it since the start. */
  get(deviceId: string): SleepState | null;
  /** Records a sleep state the hardware showed (answering at all means awake); reports what is news. */
  record(device: MappedDevice, state: SleepState, cause: SensorCause): void;
  /** Counts the device's recorded changes: two counts differ when its state moved in between. */
  changes(deviceId: string): number;
  /** Why a command must not be sent to the device now (a LOCAL_WAKEUP device in deep sleep); else null. */
  refusal(device: MappedDevice): string | null;
  /** How much longer than usual the device may take to answer (a REMOTE_WAKEUP device wakes up first). */
  graceMs(device: MappedDevice): number;
  /** Forgets a device: its next state is reported whatever it is. */
  forget(deviceId: string): void;
}

/** Which lock boards answer. */
export interface BoardReachability {
  isReachable(board: number): boolean;
}
