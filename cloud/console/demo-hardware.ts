import type { DemoAction, DemoLocation } from "../../shared/api/console-demo.ts";

/**
 * The demo's simulated hardware as the console's demo panel reaches it (docs/decisions/console.md, "The demo
 * hardware panel"). Only the demo (`npm start`) plugs one in, with the functions its stdin console calls;
 * without it the cloud serves no panel route at all, so production has none.
 */
export type DemoHardware = {
  /** Every location the demo simulates, whatever its operator (the route keeps those the staff sees). */
  locations(): DemoLocation[];
  /** Plays one act; `refused` says, in a line a person can act on, why it could not be played. */
  act(action: DemoAction): Promise<{ done: string } | { refused: string }>;
};
