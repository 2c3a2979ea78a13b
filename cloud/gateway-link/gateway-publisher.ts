import type { MqttClient } from "mqtt";
import type { Clock } from "../../shared/time/clock.ts";
import type { KeysDown } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import type { GatewayPublisher } from "../ports.ts";

/**
 * What the cloud sends gateways over its MQTT session: commands, acks, key changes, all QoS 1. Each carries
 * `sent_at`, the cloud's clock as it is published (a resend too), so gateways learn the cloud's time
 * (docs/decisions/clock.md).
 */
export function createGatewayPublisher(
  client: MqttClient,
  prefix: string,
  clock: Clock,
  /** Key changes are the key sync's to send: told which gateways' views changed. */
  keysChanged: (gatewayIds: string[]) => void,
) {
  const send = (gatewayId: string, channel: "cmd" | "ack" | "keys", msg: object) =>
    client.publishAsync(
      topicFor(prefix, gatewayId, channel),
      JSON.stringify({ ...msg, sent_at: clock.now().toISOString() }),
      { qos: 1 },
    );
  const publisher: GatewayPublisher = {
    async publishCommand(gatewayId, request) {
      await send(gatewayId, "cmd", request);
    },
    async ack(gatewayId, seqs, outboxId) {
      await send(gatewayId, "ack", outboxId === undefined ? { seqs } : { seqs, outbox_id: outboxId });
    },
    keysChanged,
  };

  return {
    publisher,

    /** Sends a gateway what the key sync decided it lacks. */
    async publishKeys(gatewayId: string, msg: KeysDown): Promise<void> {
      await send(gatewayId, "keys", msg);
    },

    /**
     * Answers a gateway's `online` with its session's `sync` token: the first message it can tell was sent
     * after it connected, so it knows the cloud's time now rather than when a queued copy was sent. A
     * heartbeat's probe is answered the same way: a round trip, which bounds the cloud's time from above.
     */
    async echoSync(gatewayId: string, sync: string): Promise<void> {
      await send(gatewayId, "ack", { seqs: [], sync });
    },

    /** Asks each gateway to resend what the cloud has not confirmed, instead of waiting for its periodic resend. */
    async askToResend(gatewayIds: string[]): Promise<void> {
      await Promise.all(gatewayIds.map((id) => send(id, "ack", { seqs: [], resend: true })));
    },
  };
}
