import type { GatewayMessageKind, GatewayRefusal } from "../../cloud/metrics.ts";
import type { UpMessageInput } from "../../shared/wire/messages.ts";
import { type Channel, topicFor } from "../../shared/wire/topics.ts";
import { fx } from "./fixture-site.ts";

/**
 * What gateway A's MQTT credentials (gw-a1, operator A, location L1) come to, attempt by attempt: the
 * authorization table of a gateway, as data. test/cloud/gateway-authorization.test.ts runs every
 * row against the embedded broker and against Mosquitto with the exported ACL and configuration, each
 * with the cloud's real link in front of its store. Also named: gw-a2 (operator A, D1), gw-b1
 * (operator B, B1, given a camera here).
 *
 * Outcomes:
 * - delivered: it reaches its reader (the cloud, or the gateway itself), and an `up` report is applied;
 * - refused by the broker: it reaches no one; how the broker says so is in `signal`;
 * - dropped and counted: the cloud acknowledges it (so it is not resent for ever), stores nothing of it,
 *   and counts it in `parking_cloud_gateway_messages_refused_total{type, reason}`;
 * - kept without the device: the cloud keeps the fact as the gateway's own (its reader, its site) but
 *   without the device it named, and counts it.
 */
export type Outcome =
  | "delivered"
  | "refused by the broker"
  | "dropped and counted"
  | "kept without the device";

export type BrokerKind = "embedded aedes" | "mosquitto";

/** Names a topic of the wire under the run's prefix. */
export type Topics = { of(gatewayId: string, channel: Channel): string; prefix: string };

/** What a report row's message may refer to; created before the report rows run. */
export type Fixtures = {
  /** A lock command of operator B on gw-b1's device, waiting for its gateway. */
  bLockCommand: string;
  /** A take-photo command of operator B on gw-b1's camera (its GUARD device). */
  bPhotoCommand: string;
};

type Base = { case: string; expected: Outcome };

export type PublishRow = Base & {
  act: "publish";
  topic: (t: Topics) => string;
  qos: 0 | 1 | 2;
  /** For a refusal: whether the broker closes the publisher's connection (else it drops the message). */
  closes?: Record<BrokerKind, boolean>;
};

export type SubscribeRow = Base & {
  act: "subscribe";
  filter: (t: Topics) => string;
  qos?: 1 | 2;
  /**
   * Where the cloud then publishes, on a topic the filter matches; none for `$SYS/#`, where the broker's
   * own (retained) messages would arrive at once.
   */
  probe: ((t: Topics) => string) | null;
  /** The SUBACK: the QoS granted, or "refused" (0x80). */
  suback: Record<BrokerKind, number | "refused">;
};

export type ReportRow = Base & {
  act: "report";
  /** The message, published by A on its own `up` topic at QoS 1 with `seq`. */
  message: (seq: number, f: Fixtures) => UpMessageInput | Record<string, unknown>;
  /** For dropped and kept rows: the counter's labels. */
  counted?: { type: GatewayMessageKind; reason: GatewayRefusal };
  /** delivered: tables the report must change; kept: the table that gains a row without a device. */
  tables?: string[];
};

export type AuthorizationRow = PublishRow | SubscribeRow | ReportRow;

const A = "gw-a1";
const A2 = "gw-a2";
const B = "gw-b1";
export const ACTING_GATEWAY = A;

const OWN_DEVICE = fx.device("L1", "1");
const A2_DEVICE = fx.device("D1", "2");
const B_DEVICE = fx.device("B1", "1");
const at = "2026-01-15T10:00:00.000Z";
const refusedBy = (aedes: boolean, mosquitto: boolean) => ({ "embedded aedes": aedes, mosquitto });
/** aedes closes a 3.1.1 connection on a refused publish (no reason code to carry); Mosquitto drops it. */
const DENIED = refusedBy(true, false);
const SUB_REFUSED = { "embedded aedes": "refused", mosquitto: 1 } as const;
const SUB_GRANTED = { "embedded aedes": 1, mosquitto: 1 } as const;

export const GATEWAY_AUTHORIZATION: readonly AuthorizationRow[] = [
  // Its own up channels, each; QoS 0 and 1 are the wire's.
  {
    case: "publish on its own up",
    act: "publish",
    topic: (t) => t.of(A, "up"),
    qos: 1,
    expected: "delivered",
  },
  {
    case: "publish on its own hb at QoS 0",
    act: "publish",
    topic: (t) => t.of(A, "hb"),
    qos: 0,
    expected: "delivered",
  },
  {
    case: "publish on its own status",
    act: "publish",
    topic: (t) => t.of(A, "status"),
    qos: 1,
    expected: "delivered",
  },
  {
    case: "publish on its own keys_report",
    act: "publish",
    topic: (t) => t.of(A, "keys_report"),
    qos: 1,
    expected: "delivered",
  },
  {
    case: "publish on its own up at QoS 2",
    act: "publish",
    topic: (t) => t.of(A, "up"),
    qos: 2,
    expected: "refused by the broker",
    closes: refusedBy(true, true),
  },
  // Anyone else's topics, and down topics (the cloud's to write).
  {
    case: "publish on another gateway's up (same operator)",
    act: "publish",
    topic: (t) => t.of(A2, "up"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on another operator's gateway's up",
    act: "publish",
    topic: (t) => t.of(B, "up"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on another gateway's status",
    act: "publish",
    topic: (t) => t.of(B, "status"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on its own cmd (a down topic)",
    act: "publish",
    topic: (t) => t.of(A, "cmd"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on its own keys (a down topic)",
    act: "publish",
    topic: (t) => t.of(A, "keys"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on another gateway's cmd",
    act: "publish",
    topic: (t) => t.of(B, "cmd"),
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },
  {
    case: "publish on a topic outside the wire",
    act: "publish",
    topic: (t) => `${t.prefix}/v1/other`,
    qos: 1,
    expected: "refused by the broker",
    closes: DENIED,
  },

  // Subscriptions: its own down channels only, spelled out.
  ...(["cmd", "ack", "config", "keys"] as const).map(
    (ch): SubscribeRow => ({
      case: `subscribe to its own ${ch}`,
      act: "subscribe",
      filter: (t) => t.of(A, ch),
      probe: (t) => t.of(A, ch),
      suback: SUB_GRANTED,
      expected: "delivered",
    }),
  ),
  {
    case: "subscribe to its own cmd at QoS 2 (held at QoS 1; aedes' SUBACK echoes the 2 asked for)",
    act: "subscribe",
    filter: (t) => t.of(A, "cmd"),
    qos: 2,
    probe: (t) => t.of(A, "cmd"),
    suback: { "embedded aedes": 2, mosquitto: 1 },
    expected: "delivered",
  },
  {
    case: "subscribe to another operator's gateway's cmd",
    act: "subscribe",
    filter: (t) => t.of(B, "cmd"),
    probe: (t) => t.of(B, "cmd"),
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },
  {
    case: "subscribe to another gateway's keys (same operator)",
    act: "subscribe",
    filter: (t) => t.of(A2, "keys"),
    probe: (t) => t.of(A2, "keys"),
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },
  {
    case: "subscribe to every gateway's cmd (+)",
    act: "subscribe",
    filter: (t) => `${t.prefix}/v1/gw/+/cmd`,
    probe: (t) => t.of(B, "cmd"),
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },
  {
    case: "subscribe to #",
    act: "subscribe",
    filter: () => "#",
    probe: (t) => t.of(B, "cmd"),
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },
  {
    case: "subscribe to $SYS/#",
    act: "subscribe",
    filter: () => "$SYS/#",
    probe: null,
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },
  {
    case: "subscribe to its own up (what it writes)",
    act: "subscribe",
    filter: (t) => t.of(A, "up"),
    probe: (t) => t.of(A, "up"),
    suback: SUB_REFUSED,
    expected: "refused by the broker",
  },

  // Reports on its own up topic about what it drives, and about what it does not.
  {
    case: "device_state of a device it drives",
    act: "report",
    message: (seq) => ({
      type: "device_state",
      gateway_id: A,
      seq,
      observed_at: at,
      device_id: OWN_DEVICE,
      lock_state: "LOCKED",
    }),
    tables: ["devices"],
    expected: "delivered",
  },
  {
    case: "device_state of another gateway's device (same operator)",
    act: "report",
    message: (seq) => ({
      type: "device_state",
      gateway_id: A,
      seq,
      observed_at: at,
      device_id: A2_DEVICE,
      lock_state: "LOCKED",
    }),
    counted: { type: "device_state", reason: "foreign_device" },
    expected: "dropped and counted",
  },
  {
    case: "device_state of another operator's device",
    act: "report",
    message: (seq) => ({
      type: "device_state",
      gateway_id: A,
      seq,
      observed_at: at,
      device_id: B_DEVICE,
      lock_state: "LOCKED",
      door_open: true,
    }),
    counted: { type: "device_state", reason: "foreign_device" },
    expected: "dropped and counted",
  },
  {
    case: "hardware_event of a device it drives",
    act: "report",
    message: (seq) => ({
      type: "hardware_event",
      gateway_id: A,
      seq,
      observed_at: at,
      device_id: OWN_DEVICE,
      source: "bus0/1/1",
      event: "door_opened",
    }),
    tables: ["hardware_events"],
    expected: "delivered",
  },
  {
    case: "hardware_event of another operator's device",
    act: "report",
    message: (seq) => ({
      type: "hardware_event",
      gateway_id: A,
      seq,
      observed_at: at,
      device_id: B_DEVICE,
      source: "bus0/1/1",
      event: "door_opened",
    }),
    counted: { type: "hardware_event", reason: "foreign_device" },
    tables: ["hardware_events"],
    expected: "kept without the device",
  },
  {
    case: "command_progress of another gateway's command",
    act: "report",
    message: (seq, f) => ({
      type: "command_progress",
      gateway_id: A,
      seq,
      observed_at: at,
      command_id: f.bLockCommand,
      device_id: B_DEVICE,
      state: "SUCCESS",
      lock_state: "LOCKED",
    }),
    counted: { type: "command_progress", reason: "foreign_command" },
    expected: "dropped and counted",
  },
  {
    case: "access_decision at a device it drives",
    act: "report",
    message: (seq) => ({
      type: "access_decision",
      gateway_id: A,
      seq,
      observed_at: at,
      reader: "reader-1",
      device_id: OWN_DEVICE,
      card_id: "04a1b2c3d4",
      granted: false,
      action: "none",
      reason: "unknown_card",
      whitelist_id: null,
      decided_by: "local",
      actuated: null,
    }),
    tables: ["access_events"],
    expected: "delivered",
  },
  {
    case: "access_decision at another gateway's device (same operator)",
    act: "report",
    message: (seq) => ({
      type: "access_decision",
      gateway_id: A,
      seq,
      observed_at: at,
      reader: "reader-1",
      device_id: A2_DEVICE,
      card_id: "04a1b2c3d4",
      granted: true,
      action: "unlock",
      reason: "whitelisted",
      whitelist_id: null,
      decided_by: "local",
      actuated: true,
    }),
    counted: { type: "access_decision", reason: "foreign_device" },
    tables: ["access_events"],
    expected: "kept without the device",
  },
  {
    case: "access_decision parking at another operator's locker (no session opens there)",
    act: "report",
    message: (seq) => ({
      type: "access_decision",
      gateway_id: A,
      seq,
      observed_at: at,
      reader: "reader-1",
      device_id: B_DEVICE,
      card_id: "04a1b2c3d4",
      granted: true,
      action: "lock",
      reason: "parked",
      whitelist_id: null,
      decided_by: "local",
      actuated: true,
    }),
    counted: { type: "access_decision", reason: "foreign_device" },
    tables: ["access_events"],
    expected: "kept without the device",
  },
  {
    case: "photo part for another operator's take-photo",
    act: "report",
    message: (seq, f) => ({
      type: "photo",
      gateway_id: A,
      seq,
      observed_at: at,
      command_id: f.bPhotoCommand,
      device_id: fx.guard(B),
      part: 1,
      parts: 1,
      mime: "image/jpeg",
      data: Buffer.from("not a photo of yours").toString("base64"),
    }),
    counted: { type: "photo", reason: "foreign_command" },
    expected: "dropped and counted",
  },
  {
    case: "a report naming another gateway in its body",
    act: "report",
    message: (seq) => ({
      type: "device_state",
      gateway_id: B,
      seq,
      observed_at: at,
      device_id: B_DEVICE,
      lock_state: "LOCKED",
    }),
    counted: { type: "device_state", reason: "other_gateway" },
    expected: "dropped and counted",
  },
  {
    case: "a report that fails its schema",
    act: "report",
    message: (seq) => ({ type: "no_such_report", gateway_id: A, seq }),
    counted: { type: "up", reason: "invalid" },
    expected: "dropped and counted",
  },
];

/** The topics of a run: its prefix, `topicFor` under it. */
export function topicsUnder(prefix: string): Topics {
  return { prefix, of: (gatewayId, channel) => topicFor(prefix, gatewayId, channel) };
}
