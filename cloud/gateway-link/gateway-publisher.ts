import type { MqttClient } from "mqtt";
import type { KeysDown } from "../../shared/wire/messages.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import type { GatewayPublisher } from "../ports.ts";

/** What the cloud sends gateways over its MQTT session: commands, acks, key changes, all QoS 1. */
export function createGatewayPublisher(
  client: MqttClient,
  prefix: string,
  /** Key changes are the key sync's to send: told which gateways' views changed. */
  keysChanged: (gatewayIds: string[]) => void,
) {
  const publisher: GatewayPublisher = {
    async publishCommand(gatewayId, request) {
      await client.publishAsync(topicFor(prefix, gatewayId, "cmd"), JSON.stringify(request), { qos: 1 });
    },
    async ack(gatewayId, seqs, outboxId) {
      const ack = outboxId === undefined ? { seqs } : { seqs, outbox_id: outboxId };
      await client.publishAsync(topicFor(prefix, gatewayId, "ack"), JSON.stringify(ack), { qos: 1 });
    },
    keysChanged,
  };

  return {
    publisher,

    /** Sends a gateway what the key sync decided it lacks. */
    async publishKeys(gatewayId: string, msg: KeysDown): Promise<void> {
      await client.publishAsync(topicFor(prefix, gatewayId, "keys"), JSON.stringify(msg), { qos: 1 });
    },

    /** Asks each gateway to resend what the cloud has not confirmed, instead of waiting for its periodic resend. */
    async askToResend(gatewayIds: string[]): Promise<void> {
      await Promise.all(
        gatewayIds.map((id) =>
          client.publishAsync(topicFor(prefix, id, "ack"), JSON.stringify({ seqs: [], resend: true }), {
            qos: 1,
          }),
        ),
      );
    },
  };
}
