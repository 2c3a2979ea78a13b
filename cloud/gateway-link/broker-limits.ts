/**
 * What the broker tolerates from a socket before it has proven anything (docs/decisions.md, Gateway ⇄
 * cloud wire). The embedded broker enforces all of them; the Mosquitto export the packet size.
 */
export type BrokerLimits = {
  /** Largest CONNECT, in bytes: client id, user name, secret and the status Last Will take a few hundred. */
  connectBytes: number;
  /** Largest packet after CONNECT: the wire's biggest payload, a 1000-device map, is about 140 KB. */
  packetBytes: number;
  /** A socket that has not completed its CONNECT by then is closed. */
  connectTimeoutMs: number;
  /** Failed logins from one source address within `loginWindowMs` after which it is refused outright. */
  loginFailures: number;
  loginWindowMs: number;
};

export const DEFAULT_BROKER_LIMITS: BrokerLimits = {
  connectBytes: 4 * 1024,
  packetBytes: 256 * 1024,
  connectTimeoutMs: 5_000,
  // As for /oauth2/token: far above a gateway retrying a stale secret with backoff, far below guessing.
  loginFailures: 20,
  loginWindowMs: 60_000,
};
