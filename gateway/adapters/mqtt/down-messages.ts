import type { EventEmitter } from "node:events";
import { compiledOnUse } from "../../../shared/wire/compiled.ts";
import { Ack, CommandRequest, DeviceMap, KeysDown } from "../../../shared/wire/messages.ts";
import type { Channel } from "../../../shared/wire/topics.ts";
import type { BrokerLinkEvents } from "../../ports.ts";

/**
 * What the cloud sent on one of this gateway's channels, as the BrokerLink port's events: each payload is
 * validated with its shared schema, and keys addressed to another gateway are refused. Returns why a message
 * was dropped, or null once it was passed on (or was on a channel the gateway does not read). Each message's
 * `sent_at` is told first (`cloudTime`), so a command is judged on the cloud's time it brought; an ack that
 * echoes `sync`, this session's token, is fresh; one that echoes another token answers a heartbeat's probe.
 */
export function emitDownMessage(
  link: EventEmitter<BrokerLinkEvents>,
  gatewayId: string,
  channel: Channel,
  payload: string,
  sync?: string,
): { dropped: string; issues?: unknown } | null {
  let data: unknown;
  try {
    data = JSON.parse(payload);
  } catch {
    return { dropped: "non-JSON message dropped" };
  }
  const invalid = (issues: unknown) => ({ dropped: "invalid message dropped", issues });
  switch (channel) {
    case "cmd": {
      const r = compiledOnUse(CommandRequest).safeParse(data);
      if (!r.success) return invalid(r.error.issues);
      link.emit("cloudTime", r.data.sent_at, false);
      link.emit("command", r.data);
      return null;
    }
    case "ack": {
      const r = Ack.safeParse(data);
      if (!r.success) return invalid(r.error.issues);
      const fresh = sync !== undefined && r.data.sync === sync;
      link.emit("cloudTime", r.data.sent_at, fresh, fresh ? undefined : r.data.sync);
      link.emit("ack", r.data.seqs, r.data.resend ?? false, r.data.outbox_id);
      return null;
    }
    case "config": {
      const r = DeviceMap.safeParse(data);
      if (!r.success) return invalid(r.error.issues);
      link.emit("cloudTime", r.data.sent_at, false);
      link.emit("deviceMap", r.data);
      return null;
    }
    case "keys": {
      const r = compiledOnUse(KeysDown).safeParse(data);
      if (!r.success) return invalid(r.error.issues);
      if (r.data.gateway_id !== gatewayId) return invalid("addressed to another gateway");
      link.emit("cloudTime", r.data.sent_at, false);
      link.emit("keys", r.data);
      return null;
    }
    default:
      return null;
  }
}
