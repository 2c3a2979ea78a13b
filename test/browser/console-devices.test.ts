import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import type { Command } from "../../shared/api/command.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { CONSOLE_PASSWORD, type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { type GatewayReports, gatewayReports } from "../support/gateway-reports.ts";

const LOCKER = fx.device("L1", "1");
const PHONE = { width: 390, height: 844 };
const HOSTILE = "<img src=x onerror=alert(1)>";

/** The fixture site with one more locker at L1, whose alias is markup. */
async function addHostileLocker(site: ConsoleSite) {
  const input = fixtureManifest(await fixtureSecretHash());
  const devices = input.operators?.[0]?.locations?.[0]?.gateways?.[0]?.devices;
  if (!devices) throw new Error("the fixture manifest has no devices at L1");
  devices.push({ alias: HOSTILE, type: "LOCKER", bus: { board: 1, channel: 9 } });
  await applyManifest(site.h.db, SiteManifest.parse(input), site.h.clock);
}

/** Whether the page scrolls sideways (it must not on a phone). */
const scrollsSideways = (page: Page) =>
  page.evaluate<boolean>("document.documentElement.scrollWidth > document.documentElement.clientWidth");

describe("the console's device page", () => {
  let site: ConsoleSite;
  let gw: GatewayReports;
  beforeAll(async () => {
    site = await startConsoleSite();
    gw = gatewayReports(() => site.h);
    // The locker, force-locked by the integrator and reported LOCKED, with the throttle window passed.
    const res = await site.h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${LOCKER}/commands`,
      payload: { command: "force-lock" },
    });
    await gw.progress("gw-a1", res.json<Command>(), "SUCCESS", { lock_state: "LOCKED" });
    site.h.clock.advance(20_000);
  });
  afterAll(() => site?.close());

  it("lets an operator force-unlock a locked device with a reason, following the command to its end", async () => {
    const page = await site.signedIn("operator", `/console/devices/${LOCKER}`, PHONE);
    const alerts: string[] = [];
    page.on("dialog", (d) => {
      alerts.push(d.message());
      void d.dismiss();
    });
    const state = page.getByTestId("device-state");
    await expect.poll(() => state.textContent()).toBe("LOCKED");
    await page.getByRole("button", { name: "Force unlock" }).click();
    const dialog = page.getByRole("dialog", { name: "Force unlock" });
    await dialog.getByLabel("Reason").selectOption("OTHER");
    await dialog.getByLabel("Comment").fill(HOSTILE);
    await dialog.getByRole("button", { name: "Confirm" }).click();
    const status = page.getByTestId("command-status");
    await expect.poll(() => status.textContent()).toContain("SENT");

    // The fixture has no hardware: the test plays the gateway reporting the latch open.
    const sent = site.h.gateways.last().request;
    expect(sent).toMatchObject({ device_id: LOCKER });
    await gw.progress("gw-a1", { id: sent.command_id, device: { id: LOCKER, uri: "" } }, "SUCCESS", {
      lock_state: "UNLOCKED",
    });
    await expect.poll(() => status.textContent()).toContain("SUCCESS");
    await expect.poll(() => state.textContent()).toBe("UNLOCKED");

    const api = await site.h.call(CLIENTS.admin, { method: "GET", url: `/device/v1/devices/${LOCKER}` });
    expect(api.json<{ state: { value: string } }>().state.value).toBe("UNLOCKED");
    const staff = createStaffService({ db: site.h.db, clock: site.h.clock, cost: { ln: 10, r: 8, p: 1 } });
    const operator = await staff.authenticate("operator@a.example", CONSOLE_PASSWORD);
    const [entry] = (await listAudit(site.h.db, OP_A, { action: "command.force-unlock" })).data;
    expect(entry).toMatchObject({
      actor: { kind: "staff", id: operator?.id },
      reason: "OTHER",
      comment: HOSTILE,
    });

    // The comment shows as text in the timeline, never as markup.
    const timeline = page.getByRole("table", { name: "Timeline" });
    await timeline.getByText(HOSTILE).first().waitFor();
    await timeline.getByText("command.force-unlock by staff operator@a.example").waitFor();
    expect(await page.locator("main img").count()).toBe(0);
    expect(alerts).toEqual([]);
    expect(await scrollsSideways(page)).toBe(false);
    await page.close();
  });

  it("shows a viewer the device with no action controls, and the cloud refuses the viewer's action", async () => {
    const page = await site.signedIn("viewer", `/console/devices/${LOCKER}`, PHONE);
    await page.getByRole("table", { name: "Timeline" }).waitFor();
    for (const name of ["Force unlock", "Force lock", "Force cancel booking", "Sync device"])
      expect(await page.getByRole("button", { name }).count()).toBe(0);
    const status = await page.evaluate(async (id) => {
      const session = (await (await fetch("/console/api/session")).json()) as { csrf_token: string };
      const res = await fetch(`/console/api/devices/${id}/commands`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
        body: JSON.stringify({ command: "force-lock" }),
      });
      return res.status;
    }, LOCKER);
    expect(status).toBe(403);
    expect(await scrollsSideways(page)).toBe(false);
    await page.close();
  });

  it("shows a hostile alias as text", async () => {
    await addHostileLocker(site);
    const page = await site.signedIn("viewer", `/console/devices/${fx.device("L1", HOSTILE)}`, PHONE);
    await page.getByRole("heading", { name: `Device ${HOSTILE}` }).waitFor();
    expect(await page.locator("main img").count()).toBe(0);
    expect(await scrollsSideways(page)).toBe(false);
    await page.close();
  });
});
