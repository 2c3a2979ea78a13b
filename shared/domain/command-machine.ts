/**
 * The command lifecycle (spec: States and transitions → Command state), as a pure function.
 * NOT_SENT → SENT → RECEIVED → SUCCESS | ERROR. Progress only moves forward, so a late or repeated
 * report (QoS 1 redelivery, a reply after the deadline) can never move a command back; SUCCESS and
 * ERROR are terminal and stay terminal.
 */
export const COMMAND_STATE_VALUES = ["NOT_SENT", "SENT", "RECEIVED", "SUCCESS", "ERROR"] as const;
export type CommandStateValue = (typeof COMMAND_STATE_VALUES)[number];

export type CommandState = {
  value: CommandStateValue;
  reason: string;
  /** Each non-terminal state has its own deadline; null for terminal states. */
  timeout_at: string | null;
};

export type CommandTimeouts = { deliveryMs: number; hardwareMs: number };

export type CommandInput =
  | { kind: "dispatched" }
  | { kind: "received" }
  | { kind: "succeeded"; reason?: string }
  | { kind: "failed"; reason: string }
  | { kind: "deadline" };

const RANK: Record<CommandStateValue, number> = { NOT_SENT: 0, SENT: 1, RECEIVED: 2, SUCCESS: 3, ERROR: 3 };

export function isTerminal(value: CommandStateValue): boolean {
  return value === "SUCCESS" || value === "ERROR";
}

/** Reasons the cloud writes itself when a deadline passes. */
export const DEADLINE_REASONS = {
  NOT_SENT: "delivery deadline exceeded: the command could not be handed to the gateway",
  SENT: "delivery deadline exceeded: the gateway did not acknowledge the command",
  RECEIVED: "confirmation deadline exceeded: the hardware did not confirm the command",
} as const;

/** Returns the next state, or null when the input does not apply (ignored, never an error). */
export function transitionCommand(
  s: CommandState,
  input: CommandInput,
  now: Date,
  t: CommandTimeouts,
): CommandState | null {
  const value = s.value;
  if (value === "SUCCESS" || value === "ERROR") return null;
  const after = (ms: number) => new Date(now.getTime() + ms).toISOString();
  switch (input.kind) {
    case "dispatched":
      // The delivery deadline was set when the command was created; dispatching keeps it.
      return RANK[s.value] < RANK.SENT ? { value: "SENT", reason: s.reason, timeout_at: s.timeout_at } : null;
    case "received":
      return RANK[s.value] < RANK.RECEIVED
        ? { value: "RECEIVED", reason: "", timeout_at: after(t.hardwareMs) }
        : null;
    case "succeeded":
      return { value: "SUCCESS", reason: input.reason ?? "", timeout_at: null };
    case "failed":
      return { value: "ERROR", reason: input.reason, timeout_at: null };
    case "deadline":
      if (s.timeout_at === null || Date.parse(s.timeout_at) > now.getTime()) return null;
      return { value: "ERROR", reason: DEADLINE_REASONS[value], timeout_at: null };
  }
}

export function initialCommandState(now: Date, t: CommandTimeouts): CommandState {
  return { value: "NOT_SENT", reason: "", timeout_at: new Date(now.getTime() + t.deliveryMs).toISOString() };
}
