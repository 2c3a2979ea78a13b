import { mkdtemp, readFile, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAlarmService } from "../../cloud/alarms/alarm-service.ts";
import { deviceRepository } from "../../cloud/devices/device-repository.ts";
import { derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { type RunningDemo, startDemo } from "../../demo/demo.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import { launchBrowser } from "../support/browser.ts";
import { eventually } from "../support/eventually.ts";

/**
 * The demo hardware panel (/console/demo) on the demo itself (`npm start`'s pieces, in this process on free
 * ports): an operator plays the simulated hardware from the page and the cloud sees what real hardware would
 * have made it see; a viewer sees the drawing without a button.
 */
const PASSWORD = "demo-console-password";
let dir: string;
let demo: RunningDemo;
let browser: Browser;

const operatorId = () => demo.manifest.operators[0]?.id as string;
const locationId = (code: string) => derivedId(operatorId(), "location", code);

async function signedIn(who: "operator" | "viewer", viewport = { width: 1280, height: 900 }): Promise<Page> {
  const page = await browser.newPage({ viewport });
  await page.goto(`${demo.cloud.baseUrl}/console/`);
  await page.getByLabel("Email").fill(`${who}@demo.example`);
  await page.getByLabel("Password").fill(PASSWORD);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByText("Signed in as").waitFor();
  return page;
}

/** The panel, reached through the navigation as a person would. */
async function openPanel(page: Page) {
  await page.getByRole("link", { name: "Demo hardware" }).click();
  await page.getByRole("heading", { name: "Demo hardware", level: 1 }).waitFor();
}

/** axe-core's violations of the page as it stands (rule ids), from the script the package ships. */
async function axeViolations(page: Page): Promise<string[]> {
  // Evaluated, not added as a script tag: the console's CSP rightly refuses an inline script.
  await page.evaluate(await readFile(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8"));
  return page.evaluate<string[]>(
    "axe.run(document, { resultTypes: ['violations'] }).then((r) => r.violations.map((v) => v.id))",
  );
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "console-demo-"));
  demo = await startDemo({
    env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dir, HOST: "127.0.0.1" },
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
  });
  browser = await launchBrowser();
  // Every gateway drives its devices once the cloud's device map has arrived over the broker.
  await eventually(async () => {
    for (const g of demo.gateways.gateways) expect((await g.control.devices()).length).toBeGreaterThan(0);
  }, 15_000);
});
afterAll(async () => {
  await browser?.close();
  await demo?.stop();
  await rm(dir, { recursive: true, force: true });
});

describe("the console's demo hardware panel", () => {
  it("trips a tamper switch: the page shows it tripped and the cloud raises a tamper alarm", async () => {
    const page = await signedIn("operator");
    await openPanel(page);
    const tile = page.getByRole("listitem", { name: "Device HB-H door-north" });
    await tile.getByText("at rest").waitFor();
    await page.getByRole("button", { name: "Trip tamper, HB-H door-north" }).click();
    await page
      .getByRole("status")
      .getByText("HB-H door-north: tamper switch (board 3 channel 1) tripped")
      .waitFor();
    await tile.getByText("tripped").waitFor();
    const alarms = createAlarmService({ db: demo.cloud.db, clock: systemClock });
    await expect
      .poll(async () => (await alarms.list(operatorId(), { status: ["ACTIVE"] })).map((a) => a.kind), {
        timeout: 15_000,
      })
      .toContain("tamper");
    await page.getByRole("button", { name: "Reset tamper, HB-H door-north" }).click();
    await tile.getByText("at rest").waitFor();
    await page.close();
  });

  it("holds a known and an unknown card to a door's reader: the cloud keeps the gateway's grant and refusal", async () => {
    const page = await signedIn("operator");
    await openPanel(page);
    await page.getByRole("button", { name: "Tap Ann's card ****c3d4, reader HB-H door-north" }).click();
    await page.getByRole("status").getByText("HB-H door-north: card ****c3d4 held to the reader").waitFor();
    await page.getByRole("button", { name: "Tap Unknown card ****ffee, reader HB-H door-south" }).click();
    await page.getByRole("status").getByText("HB-H door-south: card ****ffee held to the reader").waitFor();
    const decisions = () =>
      demo.cloud.db
        .selectFrom("access_events")
        .select(["card_id", "granted", "reader"])
        .where("location_id", "=", locationId("HB-H"))
        .orderBy("card_id")
        .execute();
    await expect.poll(decisions, { timeout: 15_000 }).toEqual([
      { card_id: "04a1b2c3d4", granted: 1, reader: "door-north" },
      { card_id: "0badc0ffee", granted: 0, reader: "door-south" },
    ]);
    await page.close();
  });

  it("opens a free locker's door: the page shows it open and the cloud's device has its door open", async () => {
    const page = await signedIn("operator");
    await openPanel(page);
    const tile = page.getByRole("listitem", { name: "Device CS-L 1" });
    await tile.getByText("closed").waitFor();
    await page.getByRole("button", { name: "Open door, CS-L 1" }).click();
    await page.getByRole("status").getByText("CS-L 1: door open").waitFor();
    await tile.getByText("open", { exact: true }).waitFor();
    const locker = derivedId(locationId("CS-L"), "device", "1");
    await expect
      .poll(async () => (await deviceRepository(demo.cloud.db).find(locker))?.door_open, { timeout: 15_000 })
      .toBe(true);
    await page.getByRole("button", { name: "Close door, CS-L 1" }).click();
    await tile.getByText("closed").waitFor();
    expect(await axeViolations(page)).toEqual([]);
    await page.close();
  });

  it("shows a viewer the simulated site without a single button to play it, on a phone's width too", async () => {
    const page = await signedIn("viewer", { width: 390, height: 844 });
    await openPanel(page);
    await page.getByRole("listitem", { name: "Device HB-H door-north" }).waitFor();
    await page.getByText("A viewer looks, without acting.").waitFor();
    expect(
      await page
        .getByRole("main")
        .getByRole("button", { name: /door|tamper|latch|card/i })
        .count(),
    ).toBe(0);
    const sideways = "document.documentElement.scrollWidth > document.documentElement.clientWidth";
    expect(await page.evaluate<boolean>(sideways)).toBe(false);
    await page.close();
  });
});
