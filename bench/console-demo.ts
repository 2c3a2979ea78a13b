/**
 * The demo (`npm start`) on free ports with its data in a temporary directory, for what looks at the operator
 * console in a browser: the console bench (bench/console.ts) and the README's screenshots
 * (scripts/console-screenshots.ts).
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import pino from "pino";
import type { Page } from "playwright-core";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import { demoLocker, startDemo } from "../demo/demo.ts";

export type ConsoleDemo = {
  base: string;
  /** The demo staff's password (both accounts). */
  password: string;
  /** The demo's first locker and its location. */
  deviceId: string;
  locationId: string;
  stop(): Promise<void>;
};

export async function startConsoleDemo(): Promise<ConsoleDemo> {
  const dataDir = await mkdtemp(path.join(tmpdir(), "console-demo-"));
  const demo = await startDemo({
    env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dataDir, HOST: "127.0.0.1" },
    log: pino({ level: "silent" }),
  });
  // The pages show what the gateways report: wait until each has its devices from the cloud.
  const until = Date.now() + 15_000;
  for (const g of demo.gateways.gateways) {
    while ((await g.control.devices()).length === 0) {
      if (Date.now() > until) throw new Error(`gateway ${g.config.gateway_id} never got its devices`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  const locker = demoLocker(demo.manifest);
  const operator = demo.manifest.operators[0];
  const location = operator?.locations.find((l) => l.code === locker.location);
  if (!operator || !location) throw new Error("the demo manifest has no location for its first locker");
  return {
    base: demo.cloud.baseUrl,
    password: demo.settings.consolePassword,
    deviceId: locker.id,
    locationId: location.id ?? derivedId(operator.id, "location", location.code),
    async stop() {
      await demo.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** Signs in on the sign-in form `page` shows (any console address), and waits for the console's bar. */
export async function signInForm(page: Page, password: string, email = "operator@demo.example") {
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Signed in as").waitFor();
}
