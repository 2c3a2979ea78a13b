import { z } from "zod";

/**
 * The demo hardware panel's answers and actions (cloud/http/routes/console-demo.ts): the simulated site of
 * each location as the simulator has it, and what a person may do to it — what `npm start`'s stdin console
 * does. Only the demo serves these routes.
 */

export const DEMO_LATCHES = ["locked", "unlocked"] as const;

/** A device of the location as the simulator holds it; null where the device has no such part or no run. */
export const DemoDevice = z.object({
  alias: z.string(),
  type: z.string(),
  gateway_id: z.string(),
  /** False where the demo leaves its gateway to a daemon of your own (DEMO_SKIP_GATEWAYS). */
  simulated: z.boolean(),
  /** The latch of its lock-bus channel. */
  latch: z.enum(DEMO_LATCHES).nullable(),
  door_open: z.boolean().nullable(),
  /** The tamper switch of its lock-bus channel: true when tripped. */
  tamper: z.boolean().nullable(),
  /** Whether an RFID reader is at it (the doors of a bike house). */
  reader: z.boolean(),
});
export type DemoDevice = z.infer<typeof DemoDevice>;

/** A card the panel can hold to a reader: a position in the location's list, masked as logs show cards. */
export const DemoCard = z.object({ index: z.number().int(), label: z.string(), card: z.string() });
export type DemoCard = z.infer<typeof DemoCard>;

export const DemoLocation = z.object({
  id: z.string(),
  operator_id: z.string(),
  code: z.string(),
  label: z.string(),
  devices: z.array(DemoDevice),
  /** The cards of the whitelists that target the location, then a card no list has. */
  cards: z.array(DemoCard),
});
export type DemoLocation = z.infer<typeof DemoLocation>;

export const DemoPanel = z.object({ locations: z.array(DemoLocation) });
export type DemoPanel = z.infer<typeof DemoPanel>;

const Target = { location_id: z.string().min(1).max(100), device: z.string().min(1).max(100) };

/** One act on the simulated hardware, addressed by location id and device alias. */
export const DemoAction = z.discriminatedUnion("action", [
  z.strictObject({ ...Target, action: z.literal("tap"), card: z.number().int().min(0).max(1000) }),
  z.strictObject({ ...Target, action: z.enum(["open", "close", "tamper", "untamper"]) }),
  z.strictObject({ ...Target, action: z.literal("turn"), latch: z.enum(DEMO_LATCHES) }),
]);
export type DemoAction = z.infer<typeof DemoAction>;

/** What happened, in the words the stdin console prints. */
export const DemoActionDone = z.object({ message: z.string() });
export type DemoActionDone = z.infer<typeof DemoActionDone>;
