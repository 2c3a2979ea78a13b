/**
 * MQTT topics of the gateway ⇄ cloud wire: `<prefix>/v1/gw/<gateway_id>/<channel>` (ARCHITECTURE: Wire
 * principles). Versioned and scoped by gateway id so a broker ACL can confine each gateway to its own.
 */
export const WIRE_VERSION = "v1";

/** Channels the cloud publishes to a gateway. */
export const DOWN_CHANNELS = ["cmd", "ack", "config", "keys"] as const;
/** Channels a gateway publishes to the cloud. */
export const UP_CHANNELS = ["up", "hb", "status", "keys_report"] as const;
export type DownChannel = (typeof DOWN_CHANNELS)[number];
export type UpChannel = (typeof UP_CHANNELS)[number];
export type Channel = DownChannel | UpChannel;

/** Gateway ids become topic levels, so they may not hold MQTT wildcards or separators. */
export const GATEWAY_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

export function topicFor(prefix: string, gatewayId: string, channel: Channel): string {
  if (!GATEWAY_ID_PATTERN.test(gatewayId)) throw new Error(`invalid gateway id for a topic: ${gatewayId}`);
  return `${prefix}/${WIRE_VERSION}/gw/${gatewayId}/${channel}`;
}

/** The cloud's subscription for one up channel of every gateway. */
export function wildcardFor(prefix: string, channel: UpChannel): string {
  return `${prefix}/${WIRE_VERSION}/gw/+/${channel}`;
}

/** A shared-subscription group name: one topic level, no wildcards (MQTT 5 §4.8.2). */
export const SHARE_GROUP_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * `filter` as a shared subscription of `group` (`$share/<group>/<filter>`): the broker hands each
 * matching message to one subscriber of the group, so replicas of the cloud split the gateways' messages.
 */
export function sharedFilter(group: string, filter: string): string {
  if (!SHARE_GROUP_PATTERN.test(group)) throw new Error(`invalid shared-subscription group: ${group}`);
  return `$share/${group}/${filter}`;
}

export function parseTopic(prefix: string, topic: string): { gatewayId: string; channel: Channel } | null {
  const head = `${prefix}/${WIRE_VERSION}/gw/`;
  if (!topic.startsWith(head)) return null;
  const rest = topic.slice(head.length).split("/");
  if (rest.length !== 2) return null;
  const [gatewayId, channel] = rest as [string, string];
  if (!GATEWAY_ID_PATTERN.test(gatewayId)) return null;
  if (
    !(DOWN_CHANNELS as readonly string[]).includes(channel) &&
    !(UP_CHANNELS as readonly string[]).includes(channel)
  ) {
    return null;
  }
  return { gatewayId, channel: channel as Channel };
}
