import type { DemoAction, DemoActionDone, DemoPanel } from "../shared/api/console-demo.ts";
import { ApiError, call } from "./api.ts";

/** The demo hardware panel's calls (cloud/http/routes/console-demo.ts). */

/** The simulated sites, or null where the cloud serves no panel (it runs without the demo: 404). */
export async function getDemoPanel(): Promise<DemoPanel | null> {
  try {
    return await call<DemoPanel>("GET", "/console/api/demo");
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null;
    throw err;
  }
}

/** Plays one act on the simulated hardware; resolves to what happened, in the stdin console's words. */
export async function playDemo(action: DemoAction): Promise<string> {
  return (await call<DemoActionDone>("POST", "/console/api/demo/actions", action)).message;
}
