import { DOWN_CHANNELS, parseTopic, UP_CHANNELS } from "../../shared/wire/topics.ts";

/**
 * What a gateway's MQTT credentials allow, as data (S29, S30): the embedded broker enforces it and the
 * Mosquitto ACL and configuration are written from it. A gateway reaches only its own topics,
 * `<prefix>/v1/gw/<its id>/<channel>`, each named in full (no wildcards); anything else is refused.
 * docs/mosquitto.md and test/support/gateway-authorization.ts list what each attempt comes to.
 */
export const GATEWAY_ACL = {
  /** Channels it may publish on. */
  publish: UP_CHANNELS,
  /** Channels it may subscribe to. */
  subscribe: DOWN_CHANNELS,
  /** The highest QoS of a publish or a granted subscription: the wire uses 0 and 1. */
  maxQos: 1,
} as const;

const PUBLISH: ReadonlySet<string> = new Set<string>(GATEWAY_ACL.publish);
const SUBSCRIBE: ReadonlySet<string> = new Set<string>(GATEWAY_ACL.subscribe);

/** Whether gateway `gatewayId` may publish on `topic`. */
export function gatewayMayPublish(prefix: string, gatewayId: string, topic: string): boolean {
  const t = parseTopic(prefix, topic);
  return t !== null && t.gatewayId === gatewayId && PUBLISH.has(t.channel);
}

/** Whether gateway `gatewayId` may subscribe to `filter` (one of its own down topics, spelled out). */
export function gatewayMaySubscribe(prefix: string, gatewayId: string, filter: string): boolean {
  const t = parseTopic(prefix, filter);
  return t !== null && t.gatewayId === gatewayId && SUBSCRIBE.has(t.channel);
}
