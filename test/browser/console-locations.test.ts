import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { rider, riderFlow } from "../support/rider-sessions.ts";

const HOSTILE = "<img src=x onerror=alert(1)>";
const PHONE = { width: 390, height: 844 };
const L1 = fx.location("L1");
const L1_DEVICES = ["1", "2", "3", "4", "5"].map((a) => fx.device("L1", a));
/** How long gw-a1's daemon has run at its heartbeat: 3 days 4 hours 5 minutes. */
const RAN_MS = ((3 * 24 + 4) * 60 + 5) * 60_000;

/** Whether the page scrolls sideways (it must not, even on a phone). */
async function scrollsSideways(page: Page): Promise<boolean> {
  const [scroll, inner] = await page.evaluate<number[]>(
    "[document.documentElement.scrollWidth, window.innerWidth]",
  );
  return (scroll as number) > (inner as number);
}

// The console's first views: the operator's locations, and one location's devices and gateways.
describe("the console's locations", () => {
  let site: ConsoleSite;
  let alerts: string[];
  /** When gw-a1's daemon started: its heartbeat is sent at the cloud's now, so on the cloud's clock as well. */
  let startedAt: string;

  beforeAll(async () => {
    site = await startConsoleSite();
    const { h } = site;
    startedAt = new Date(h.clock.now().getTime() - RAN_MS).toISOString();
    // gw-a1 heard, every locker of L1 reached, its outbox at seq 7 holding 12 rows, running 3 days 4 hours.
    await h.heartbeat({
      gateway_id: "gw-a1",
      sent_at: h.clock.now().toISOString(),
      devices: L1_DEVICES.map((device_id) => ({ device_id, reachable: true })),
      outbox: { id: "0b0b0b0b-0000-4000-8000-000000000001", unconfirmed_from: 7, depth: 12 },
      runtime: { version: "0.1.0", started_at: startedAt },
    });
    // A rider in locker 2, whose unlock is under way: its state has a deadline.
    const alice = await rider(h, OP_A, "alice");
    const flow = riderFlow(h);
    await flow.lock(alice, fx.device("L1", "2"));
    await flow.command(alice, fx.device("L1", "2"), { command: "unlock" });
    // A hostile label and address, set through the public API as an integrator could.
    const patched = await h.call(CLIENTS.admin, {
      method: "PATCH",
      url: `/location/v1/locations/${fx.location("H1")}`,
      payload: { label: HOSTILE, address: HOSTILE },
    });
    expect(patched.statusCode, patched.body).toBe(204);
    alerts = [];
  });
  afterAll(() => site?.close());

  async function open(role: "viewer" | "operator", path = "/console/", viewport = PHONE) {
    const page = await site.signedIn(role, path, viewport);
    page.on("dialog", (d) => {
      alerts.push(d.message());
      void d.dismiss();
    });
    return page;
  }

  for (const role of ["operator", "viewer"] as const) {
    it(`lists the operator's locations with connection and counts, and filters them (${role})`, async () => {
      const page = await open(role);
      await page.getByRole("heading", { name: "Locations" }).waitFor();
      expect(await page.getByRole("link", { name: "Locations" }).getAttribute("aria-current")).toBe("page");
      const table = page.getByRole("table");
      await table.getByRole("link", { name: "#L1 Lockers one" }).waitFor();
      const l1 = table.getByRole("row").filter({ hasText: "#L1 Lockers one" });
      expect((await l1.getByRole("cell").allTextContents()).slice(1)).toEqual([
        "Street 1",
        "Online",
        "4",
        "5",
        "5",
      ]);
      expect(await table.getByRole("row").count()).toBe(4);
      expect(await table.textContent()).not.toContain("B lockers");

      // Each filter asks the cloud again: wait for the list it answers, not for a row count that the list
      // before it may already have.
      const links = () => table.getByRole("link").allTextContents();
      await page.getByLabel("Search").fill("docks");
      await expect.poll(links).toEqual(["#D1 Docks one"]);
      await page.getByLabel("Search").fill("");
      await page.getByLabel("Connection").selectOption("online");
      await expect.poll(links).toEqual(["#L1 Lockers one"]);
      expect(await scrollsSideways(page)).toBe(false);
      // The filters are in the address: reloaded (or pasted), the list is filtered the same.
      expect(new URL(page.url()).search).toBe("?connection=online");
      await page.reload();
      await page.getByRole("table").getByRole("link", { name: "#L1 Lockers one" }).waitFor();
      expect(await page.getByRole("table").getByRole("link").count()).toBe(1);
      expect(await page.getByLabel("Connection").inputValue()).toBe("online");
      await page.close();
    });

    it(`opens a location's device grid and gateway panel from the list (${role})`, async () => {
      const page = await open(role);
      await page.getByRole("link", { name: "#L1 Lockers one" }).click();
      await page.getByRole("heading", { name: "#L1 Lockers one" }).waitFor();
      expect(new URL(page.url()).pathname).toBe(`/console/locations/${L1}`);
      const grid = page.getByRole("list", { name: "Devices" });
      expect(await grid.getByRole("link").allTextContents()).toEqual(["1", "2", "3", "4", "5", "gw-a1"]);
      const two = grid
        .getByRole("listitem")
        .filter({ has: page.getByRole("link", { name: "2", exact: true }) });
      expect(await two.getByRole("link").getAttribute("href")).toBe(
        `/console/devices/${fx.device("L1", "2")}`,
      );
      const tile = await two.textContent();
      expect(tile).toMatch(/State\s*UNLOCKING \(\d+:\d\d left\)/);
      expect(tile).toContain("LockLOCKED");
      expect(tile).toContain("HealthHEALTHY");
      expect(tile).toContain("Sleepawake");
      expect(tile).toMatch(/Occupant[0-9a-f-]{36}/);
      const gateway = page.getByRole("article", { name: "Gateway gw-a1" });
      const panel = await gateway.textContent();
      expect(panel).toContain("ConnectionOnline (HEALTHY)");
      expect(panel).toContain("Last heartbeat2026-");
      expect(panel).toContain("unconfirmed from seq 7");
      expect(panel).toContain("Outbox depth12");
      expect(panel).toContain("Whitelist versionnot reported");
      expect(panel).toContain("Runtime version0.1.0");
      expect(panel).toContain(`Uptime3 d 4 h (since ${startedAt.slice(0, 19).replace("T", " ")} UTC)`);
      expect(await scrollsSideways(page)).toBe(false);
      await page.close();
    });
  }

  it("says not reported for what an older gateway's heartbeat does not say", async () => {
    const { h } = site;
    await h.heartbeat({ gateway_id: "gw-a3", sent_at: h.clock.now().toISOString(), devices: [] });
    const page = await open("viewer", `/console/locations/${fx.location("H1")}`);
    const gateway = page.getByRole("article", { name: "Gateway gw-a3" });
    await gateway.waitFor();
    const panel = await gateway.textContent();
    expect(panel).toContain("Last heartbeat2026-");
    expect(panel).toContain("Outbox depthnot reported");
    expect(panel).toContain("Runtime versionnot reported");
    expect(panel).toContain("Uptimenot reported");
    await page.close();
  });

  it("shows a hostile label and address as text, in the list and on the location's page", async () => {
    const page = await open("viewer", "/console/", { width: 1280, height: 900 });
    const table = page.getByRole("table");
    await table.getByRole("link", { name: `#H1 ${HOSTILE}` }).waitFor();
    expect(await page.locator("main img").count()).toBe(0);
    await table.getByRole("link", { name: `#H1 ${HOSTILE}` }).click();
    await page.getByRole("heading", { name: `#H1 ${HOSTILE}` }).waitFor();
    expect(await page.getByRole("main").textContent()).toContain(`${HOSTILE} · `);
    expect(await page.locator("main img").count()).toBe(0);
    expect(alerts).toEqual([]);
    await page.close();
  });

  it("says so for a location of another operator, at its deep link", async () => {
    const page = await open("operator", `/console/locations/${fx.location("B1")}`);
    await page.getByRole("alert").waitFor();
    expect(await page.getByRole("alert").textContent()).toContain("not found");
    await page.close();
  });
});
