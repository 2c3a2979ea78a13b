import type { CommandRequest } from "../shared/wire/messages.ts";

/** How the cloud reaches gateways (owned by the cloud; the MQTT adapter implements it). */
export interface GatewayPublisher {
  /** Resolves once the broker has acknowledged the message (QoS 1 PUBACK). */
  publishCommand(gatewayId: string, request: CommandRequest): Promise<void>;
  /** Tells a gateway which outbox sequence numbers have been applied and may be deleted. */
  ack(gatewayId: string, seqs: number[]): Promise<void>;
  /** The key sets of these gateways changed (whitelists): bring them up to date, without waiting. */
  keysChanged(gatewayIds: string[]): void;
}
