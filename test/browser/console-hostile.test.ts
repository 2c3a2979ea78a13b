import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAlarmService } from "../../cloud/alarms/alarm-service.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { staffRepository } from "../../cloud/staff/staff-repository.ts";
import type { Command } from "../../shared/api/command.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { signIn } from "../support/console-views.ts";
import { CLIENTS, fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { type GatewayReports, gatewayReports } from "../support/gateway-reports.ts";

// Each sets the marker if it ever runs as markup; an alias is at most 32 characters.
const ALIAS = "<img src=x onerror=__pwned=1>";
const LABEL = `<script>window.__pwned=1</script><img src=x onerror="window.__pwned=1;alert(1)">`;
const NAME = `#X1 ${LABEL}`;
const COMMENT = `"><svg onload="window.__pwned=1;alert(2)"></svg>{{constructor.constructor('alert(3)')()}}`;
const NOTE = `</textarea><iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>`;
const GW = "gw-ax";

/** A location of operator A whose label is markup, with one locker whose alias is markup too. */
async function addHostileLocation(site: ConsoleSite): Promise<{ location: string; device: string }> {
  const input = fixtureManifest(await fixtureSecretHash());
  const operator = input.operators?.[0];
  if (!operator?.locations) throw new Error("the fixture manifest has no operator A locations");
  operator.locations.push({
    code: "X1",
    label: LABEL,
    type: "BIKE_LOCKERS",
    latitude: 52.3,
    longitude: 4.8,
    gateways: [
      {
        id: GW,
        secret_hash: await fixtureSecretHash(),
        devices: [{ alias: ALIAS, type: "LOCKER", bus: { board: 1, channel: 1 } }],
      },
    ],
  });
  await applyManifest(site.h.db, SiteManifest.parse(input), site.h.clock);
  const location = fx.location("X1");
  return { location, device: fx.device("X1", ALIAS) };
}

/** Sends a command through the public API as operator A's integrator; the gateway reports it done. */
async function command(site: ConsoleSite, gw: GatewayReports, device: string, body: Record<string, unknown>) {
  const res = await site.h.call(CLIENTS.admin, {
    method: "POST",
    url: `/device/v1/devices/${device}/commands`,
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  const lock_state = body.command === "force-lock" ? "LOCKED" : "UNLOCKED";
  await gw.progress(GW, res.json<Command>(), "SUCCESS", { lock_state });
  site.h.clock.advance(20_000);
}

// Markup in every string people type (a location's label, a device's alias, a force command's comment, an
// alarm's note) shows as the literal text on every view that shows it, and never runs.
describe("hostile strings in the console", () => {
  let site: ConsoleSite;
  let context: BrowserContext;
  let ids: { location: string; device: string };
  const dialogs: string[] = [];

  beforeAll(async () => {
    site = await startConsoleSite();
    ids = await addHostileLocation(site);
    const gw = gatewayReports(() => site.h);
    await command(site, gw, ids.device, { command: "force-lock" });
    await command(site, gw, ids.device, { command: "force-unlock", reason: "OTHER", comment: COMMENT });
    await site.h.report(GW, {
      type: "hardware_event",
      gateway_id: GW,
      seq: gw.nextSeq(),
      observed_at: site.h.clock.now().toISOString(),
      device_id: ids.device,
      source: "bus0/1/1",
      event: "tamper",
      detail: "",
    });
    const alarms = createAlarmService({ db: site.h.db, clock: site.h.clock });
    const [alarm] = await alarms.list(OP_A, { device_id: ids.device });
    const operator = await staffRepository(site.h.db).findByEmail("operator@a.example");
    await alarms.acknowledge(OP_A, alarm?.id ?? "", { kind: "staff", id: operator?.id ?? "" }, NOTE);
    context = await site.browser.newContext({ viewport: { width: 390, height: 844 } });
    await signIn(context, site.base, "operator");
  });
  afterAll(async () => {
    await context?.close();
    await site?.close();
  });

  /** Opens `path`, runs `check`, then holds that nothing ran: no alert, no marker, no element made of a string. */
  async function onView(path: string, check: (page: Page) => Promise<void>) {
    const page = await context.newPage();
    page.on("dialog", (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    const res = await page.goto(`${site.base}${path}`);
    const csp = res?.headers()["content-security-policy"] ?? "";
    const scriptSrc = csp.split(";").find((d) => d.trim().startsWith("script-src")) ?? "";
    expect(scriptSrc.trim()).toBe("script-src 'self'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).toContain("frame-ancestors 'none'");
    await check(page);
    expect(await page.evaluate<unknown>("window.__pwned")).toBeUndefined();
    expect(await page.locator("main img, main svg, main iframe, main script").count()).toBe(0);
    expect(dialogs).toEqual([]);
    // Long markup still wraps on a phone.
    expect(await page.evaluate<number>("document.documentElement.scrollWidth")).toBeLessThanOrEqual(390);
    await page.close();
  }

  it("shows the location's label as text in the list and on its page", async () => {
    await onView("/console/", (page) => page.getByRole("link", { name: NAME, exact: true }).waitFor());
    await onView(`/console/locations/${ids.location}`, async (page) => {
      await page.getByRole("heading", { name: NAME, exact: true }).waitFor();
      await page.getByRole("link", { name: ALIAS, exact: true }).waitFor();
    });
  });

  it("shows the alias and the force command's comment as text on the device page", async () => {
    await onView(`/console/devices/${ids.device}`, async (page) => {
      await page.getByRole("heading", { name: `Device ${ALIAS}`, exact: true }).waitFor();
      const timeline = page.getByRole("table", { name: "Timeline" });
      await timeline
        .getByRole("cell", { name: `by a-admin · reason OTHER · “${COMMENT}”`, exact: false })
        .first()
        .waitFor();
    });
  });

  it("shows the alias and the alarm's note as text in the alarm inbox", async () => {
    await onView("/console/alarms", async (page) => {
      const link = page.getByRole("link", { name: `Device ${ALIAS}`, exact: true });
      await link.waitFor();
      await page.getByRole("button", { name: "History" }).click();
      await page.getByRole("list", { name: "History" }).getByText(NOTE, { exact: true }).waitFor();
    });
  });

  it("shows the comment and the note as text in the audit log", async () => {
    await onView("/console/audit", async (page) => {
      await page.getByRole("cell", { name: `OTHER: ${COMMENT}`, exact: true }).waitFor();
      await page.getByRole("cell", { name: NOTE, exact: true }).waitFor();
    });
  });
});
