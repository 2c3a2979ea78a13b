/** What the runner (bench/fleet.ts) and the simulated fleet (bench/fleet/gateways.ts) tell each other. */

export type SimConfig = {
  brokerUrl: string;
  prefix: string;
  gateways: number;
  /** New MQTT connections per second during the ramp at most. */
  connectRate: number;
  /** The ramp pauses while this many outbox messages wait for the cloud's ack. */
  maxPendingUp: number;
  /** Door events per gateway per hour. */
  eventsPerHour: number;
  /** Every heartbeat of gateways whose index is a multiple of this is a lag probe. */
  probeEvery: number;
};

export type ToFleet = { kind: "stop" } | { kind: "stats"; resetDelay?: boolean };

export type FleetStats = {
  kind: "stats";
  started: number;
  connected: number;
  /** Connected and holding a device map. */
  ready: number;
  /** Gateways 0 … n−1 all ready with their first reports acknowledged: up, for the ramp's commands. */
  upPrefix: number;
  /** Outbox messages the cloud has not acknowledged yet, and how old the oldest is. */
  pendingUp: number;
  oldestPendingMs: number;
  upAppended: number;
  upPublished: number;
  heartbeats: number;
  commands: number;
  disconnects: number;
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  warnings: number;
  firstWarnings: string[];
  /** Whether up messages carry the wire's optional outbox id. */
  outboxId: boolean;
};

export type FromFleet = { kind: "probe"; gateway: number; at: number } | FleetStats;
