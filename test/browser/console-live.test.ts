import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Command } from "../../shared/api/command.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { type GatewayReports, gatewayReports } from "../support/gateway-reports.ts";
import { rider, riderFlow } from "../support/rider-sessions.ts";

const L1 = fx.location("L1");
const ONE = fx.device("L1", "1");
const THREE = fx.device("L1", "3");

/** A device's tile on its location's grid, by alias. */
const tile = (page: Page, alias: string) =>
  page
    .getByRole("list", { name: "Devices" })
    .getByRole("listitem")
    .filter({ has: page.getByRole("link", { name: alias, exact: true }) });

/** The header's word on the live stream. */
const liveStatus = (page: Page) => page.locator(".live-status");

// Every view follows the cloud without a reload: changes a gateway reports or an integrator makes show on
// the open pages within a second, the header says the stream is live and how old its news is, and a cut
// stream says so, comes back and catches up on what changed while it was down.
describe("the console's live updates", () => {
  let site: ConsoleSite;
  let gw: GatewayReports;
  beforeAll(async () => {
    site = await startConsoleSite();
    gw = gatewayReports(() => site.h);
  });
  afterAll(() => site?.close());

  /** A tamper at a device, as its gateway reports it. */
  const tamperOn = (deviceId: string) =>
    ({
      type: "hardware_event",
      gateway_id: "gw-a1",
      seq: gw.nextSeq(),
      observed_at: site.h.clock.now().toISOString(),
      device_id: deviceId,
      source: "bus0/1/1",
      event: "tamper",
      detail: "",
    }) as const;

  it("shows a command and its end on the location page and the device page, counting down to the deadline", async () => {
    const grid = await site.signedIn("viewer", `/console/locations/${L1}`);
    const device = await site.signedIn("operator", `/console/devices/${ONE}`);
    await tile(grid, "1").waitFor();
    await device.getByTestId("device-state").waitFor();
    await liveStatus(grid).getByText("Live", { exact: true }).waitFor();
    await liveStatus(device).getByText("Live", { exact: true }).waitFor();

    // An integrator locks the locker through the public API: the state with its deadline shows on both pages.
    const res = await site.h.call(CLIENTS.admin, {
      method: "POST",
      url: `/device/v1/devices/${ONE}/commands`,
      payload: { command: "force-lock" },
    });
    expect(res.statusCode, res.body).toBe(200);
    // Within a second (the stream's promise), with room for a loaded machine.
    const soon = { timeout: 3_000 };
    await expect.poll(() => tile(grid, "1").textContent(), soon).toMatch(/State\s*LOCKING \(\d+:\d\d left\)/);
    await expect.poll(() => device.getByTestId("device-state").textContent(), soon).toBe("LOCKING");
    await expect
      .poll(() => device.getByRole("definition").filter({ hasText: "left" }).textContent())
      .toMatch(/\(\d+:\d\d left\)/);
    // The timeline shows the command as it is now, pushed too.
    await device
      .getByRole("cell", { name: /Command force-lock/ })
      .first()
      .waitFor();

    // The gateway reports it done.
    await gw.progress("gw-a1", res.json<Command>(), "SUCCESS", { lock_state: "LOCKED" });
    await expect.poll(() => tile(grid, "1").textContent(), soon).toMatch(/State\s*LOCKED/);
    await expect.poll(() => device.getByTestId("device-state").textContent(), soon).toBe("LOCKED");
    await expect.poll(() => liveStatus(grid).textContent()).toMatch(/^Live · updated \d+s ago$/);
    await grid.close();
    await device.close();
  });

  it("shows a reported tamper in the alarm inbox, keeping what is typed in a filter and an open dialog", async () => {
    const page = await site.signedIn("operator", "/console/alarms");
    await page.getByText("No alarms.").waitFor();
    await liveStatus(page).getByText("Live", { exact: true }).waitFor();
    // A filter being typed (not applied yet) stays as typed when the inbox reads again.
    await page.getByLabel("Device").fill("half typed");
    await site.h.report("gw-a1", tamperOn(ONE));
    const first = page.locator("tbody", { has: page.getByRole("link", { name: "Device 1", exact: true }) });
    await first.getByRole("cell", { name: "ACTIVE" }).waitFor();
    expect(await page.getByLabel("Device").inputValue()).toBe("half typed");

    // A dialog open with a note half typed: the next alarm arrives, the note stays.
    await first.getByRole("button", { name: "Acknowledge" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Note").fill("Half a no");
    await site.h.report("gw-a1", tamperOn(THREE));
    await page.getByRole("link", { name: "Device 3", exact: true }).waitFor();
    expect(await dialog.getByLabel("Note").inputValue()).toBe("Half a no");
    await dialog.getByRole("button", { name: "Cancel" }).click();
    await page.close();
  });

  it("shows a rider's new session in the session list and an integrator's PATCH in the audit log", async () => {
    const sessions = await site.signedIn("viewer", "/console/sessions");
    const audit = await site.signedIn("viewer", "/console/audit");
    // Each read once (the tests before left audit entries, and may leave sessions).
    await sessions.getByRole("table").or(sessions.getByText("No sessions.")).waitFor();
    await audit.getByRole("table").or(audit.getByText("Nothing recorded.")).waitFor();
    expect(await audit.getByRole("row").filter({ hasText: "location.patch" }).count()).toBe(0);
    await liveStatus(sessions).getByText("Live", { exact: true }).waitFor();
    await liveStatus(audit).getByText("Live", { exact: true }).waitFor();

    expect(await sessions.getByRole("row").filter({ hasText: "active" }).count()).toBe(0);
    await riderFlow(site.h).lock(await rider(site.h, OP_A, "alice"), fx.device("L1", "4"));
    await sessions.getByRole("row").filter({ hasText: "active" }).waitFor();
    const patched = await site.h.call(CLIENTS.basic, {
      method: "PATCH",
      url: `/location/v1/locations/${L1}`,
      payload: { label: "Lockers, renamed" },
    });
    expect(patched.statusCode, patched.body).toBe(204);
    await audit.getByRole("row").filter({ hasText: "location.patch" }).waitFor();
    await sessions.close();
    await audit.close();
  });

  it("says Reconnecting… while the stream is cut, then comes back and catches up", async () => {
    const page = await site.signedIn("viewer", `/console/locations/${L1}`);
    const three = tile(page, "3");
    await expect.poll(() => three.textContent()).toContain("LockUNLOCKED");
    await liveStatus(page).getByText("Live", { exact: true }).waitFor();

    // The stream cut, and every try to open it again fails while the route is down.
    await page.route("**/console/api/live", (route) => route.abort());
    site.h.app.consoleLive.endAll();
    await page.getByRole("status").filter({ hasText: "Reconnecting…" }).waitFor();
    // A change while it is down is not pushed (no stream), but read once it is back.
    await gw.deviceState("gw-a1", THREE, { lock_state: "LOCKED" });
    await page.unroute("**/console/api/live");
    await page
      .getByRole("status")
      .filter({ hasText: /^Live$/ })
      .waitFor({ timeout: 40_000 });
    await expect.poll(() => three.textContent(), { timeout: 5_000 }).toContain("LockLOCKED");
    await page.close();
  });
});
