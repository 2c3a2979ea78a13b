import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { DEMO_MANIFEST, type RunningDemo, startDemo } from "../../demo/demo.ts";
import { createDemoPanel } from "../../demo/demo-panel.ts";

/**
 * The console's demo panel on the demo's side (demo/demo-panel.ts), where the browser test does not go: before
 * the gateways run, and with the gateways left to daemons of your own (DEMO_SKIP_GATEWAYS).
 */
describe("the demo hardware panel's simulator side", () => {
  let dir: string;
  let demo: RunningDemo;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "demo-panel-"));
    demo = await startDemo({
      env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dir, DEMO_SKIP_GATEWAYS: "gw-hb-house" },
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    });
  });
  afterAll(async () => {
    await demo?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("shows nothing and plays nothing until the demo's gateways run", async () => {
    const panel = createDemoPanel(loadManifest(DEMO_MANIFEST));
    expect(panel.hardware.locations()).toEqual([]);
    expect(await panel.hardware.act({ location_id: "x", device: "1", action: "open" })).toEqual({
      refused: "no location x in the demo",
    });
  });

  it("draws a skipped gateway's devices as not simulated, and refuses to play them as the stdin console does", async () => {
    const panel = createDemoPanel(demo.manifest);
    panel.attach(demo);
    const locations = panel.hardware.locations();
    const house = locations.find((l) => l.code === "HB-H");
    expect(house?.devices.every((d) => !d.simulated && d.latch === null && !d.reader)).toBe(true);
    expect(house?.cards.map((c) => c.card)).toEqual([
      "****c3d4",
      "****d7e8",
      "****0c0d",
      "****beef",
      "****ffee",
    ]);
    const refused = await panel.hardware.act({
      location_id: house?.id as string,
      device: "door-north",
      action: "tap",
      card: 0,
    });
    expect(refused).toEqual({
      refused: "gw-hb-house is not run by the demo (DEMO_SKIP_GATEWAYS); play its hardware with npm run sim",
    });
    expect(
      await panel.hardware.act({
        location_id: house?.id as string,
        device: "door-north",
        action: "tap",
        card: 9,
      }),
    ).toEqual({ refused: "no card 9 at HB-H" });

    const lockers = locations.find((l) => l.code === "CS-L");
    expect(lockers?.devices[0]).toMatchObject({
      alias: "1",
      simulated: true,
      latch: "unlocked",
      door_open: false,
    });
    expect(
      await panel.hardware.act({ location_id: lockers?.id as string, device: "9", action: "open" }),
    ).toEqual({
      refused: expect.stringMatching(/^CS-L has no device "9"/),
    });
  });
});
