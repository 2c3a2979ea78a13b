/**
 * What the broker tolerates from a client (docs/decisions/wire.md): from a socket before
 * it has proven anything, and from a gateway's credentials after. The Mosquitto export mirrors what
 * Mosquitto can (docs/mosquitto.md).
 */
export type BrokerLimits = {
  /** Largest CONNECT, in bytes: client id, user name, secret and the status Last Will take a few hundred. */
  connectBytes: number;
  /** Largest packet after CONNECT: the wire's biggest payload, a 1000-device map, is about 140 KB. */
  packetBytes: number;
  /** A socket that has not completed its CONNECT by then is closed. */
  connectTimeoutMs: number;
  /**
   * Failed logins for one user name from one source address within `loginWindowMs` after which that
   * user is refused from that address outright (other users behind the same address are not).
   */
  loginFailures: number;
  loginWindowMs: number;
  /**
   * QoS 1 messages the broker holds for one gateway's session, in flight and queued, across its
   * connections; further messages for it are dropped until it acknowledges some.
   */
  queuedMessages: number;
  /** The same in payload bytes. */
  queuedBytes: number;
};

export const DEFAULT_BROKER_LIMITS: BrokerLimits = {
  connectBytes: 4 * 1024,
  packetBytes: 256 * 1024,
  connectTimeoutMs: 5_000,
  // As for /oauth2/token: far above a gateway retrying a stale secret with backoff, far below guessing.
  loginFailures: 20,
  loginWindowMs: 60_000,
  // Mosquitto's default queue; a gateway that acknowledges what it gets holds a handful.
  queuedMessages: 1000,
  // Room for a key snapshot of ~150,000 grants (parts of ~200 KB) sent while the gateway was away.
  queuedBytes: 32 * 1024 * 1024,
};
