import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { staffRepository } from "../../cloud/staff/staff-repository.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import type { Command } from "../../shared/api/command.ts";
import { launchBrowser } from "../support/browser.ts";
import { ISSUER, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { CONSOLE_PASSWORD, createConsoleStaff } from "../support/console-api.ts";
import { fx, OP_A } from "../support/fixture-site.ts";
import { THROTTLE_MS } from "../support/rider-sessions.ts";
import { type Site, startSite } from "../support/site-harness.ts";

const LOCKER = fx.device("L1", "2");
const TAMPERED = fx.device("L1", "3");
const RIDDEN = fx.device("L1", "4");
const RIDER = "rider-done-when";

/**
 * The console's whole promise in one walk, on the real system: a gateway daemon on the simulator behind
 * the real Mosquitto, the cloud, and Debian's chromium. Nothing is reloaded: what changes reaches the open
 * page by the live stream.
 */
describe("the operator console, end to end", () => {
  let site: Site;
  let browser: Browser;
  let base: string;
  let riderToken: string;

  beforeAll(async () => {
    site = await startSite({
      broker: "mosquitto",
      serial: "memory",
      siteEvents: true,
      manifest: (m) => {
        const op = m.operators?.find((o) => o.id === OP_A);
        if (op) op.riders = [{ user_id: RIDER }];
      },
    });
    await site.settled();
    for (const role of ["viewer", "operator"] as const) {
      await createConsoleStaff(site, `${role}@a.example`, role, OP_A);
    }
    const rider = await userRepository(site.db).findByUserId(OP_A, RIDER);
    if (!rider) throw new Error("the rider was not declared");
    riderToken = await createTokenIssuer({
      secret: TOKEN_SECRET,
      issuer: ISSUER,
      clock: site.clock,
    }).issueUser({
      id: rider.id,
      operatorId: OP_A,
    });
    await site.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(site.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await site?.stop();
  });

  async function signedIn(role: "operator" | "viewer", path: string): Promise<Page> {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(20_000);
    await page.goto(`${base}${path}`);
    await page.getByLabel("Email").fill(`${role}@a.example`);
    await page.getByLabel("Password").fill(CONSOLE_PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in as").waitFor();
    return page;
  }

  /** A command's end, waited for by the API (`Prefer: wait`). */
  async function settledCommand(id: string): Promise<Command> {
    const res = await site.api("GET", `/device/v1/commands/${id}`, undefined, { prefer: "wait=25" });
    return res.json<Command>();
  }

  it("signs an operator in and lists every location of the operator", async () => {
    const page = await signedIn("operator", "/console/");
    const listed = await site.api("GET", "/location/v1/locations");
    const names = (listed.json<{ data: { name: string }[] }>().data ?? []).map((l) => l.name);
    expect(names.length).toBeGreaterThan(0);
    for (const name of names) await page.getByRole("link", { name, exact: true }).waitFor();
  });

  it("shows a device change as an API client moves it, then force-unlocks it with a reason", async () => {
    const page = await signedIn("operator", `/console/devices/${LOCKER}`);
    const state = page.getByTestId("device-state");
    await expect.poll(() => state.textContent()).toBe("UNLOCKED");

    const lock = await site.api("POST", `/device/v1/devices/${LOCKER}/commands`, { command: "lock" });
    expect(lock.statusCode, lock.body).toBe(200);
    expect((await settledCommand(lock.json<Command>().id)).state.value).toBe("SUCCESS");
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe("LOCKED");
    expect(site.sim.board("bus0", 1).channel(2).latch).toBe("locked");
    site.clock.jump(THROTTLE_MS);

    await page.getByRole("button", { name: "Force unlock" }).click();
    const dialog = page.getByRole("dialog", { name: "Force unlock" });

    await dialog.getByLabel("Reason").selectOption("OTHER");
    await dialog.getByLabel("Comment").fill("rider locked out, checked by phone");
    await dialog.getByRole("button", { name: "Confirm" }).click();

    await expect
      .poll(() => page.getByTestId("command-status").textContent(), { timeout: 15_000 })
      .toContain("SUCCESS");
    await expect.poll(() => site.sim.board("bus0", 1).channel(2).latch).toBe("unlocked");
    await expect.poll(() => state.textContent(), { timeout: 10_000 }).toBe("UNLOCKED");
    const [entry] = (await listAudit(site.db, OP_A, { action: "command.force-unlock" })).data;
    const operator = await staffRepository(site.db).findByEmail("operator@a.example");
    expect(entry).toMatchObject({
      actor: { kind: "staff", id: operator?.id },
      reason: "OTHER",
      comment: "rider locked out, checked by phone",
    });
  });

  it("shows a tamper in the alarm inbox without a reload, and the operator acknowledges it", async () => {
    const page = await signedIn("operator", "/console/alarms");
    await page.getByRole("heading", { name: "Alarms" }).waitFor();
    site.sim.board("bus0", 1).setTamper(3, true);
    const row = page.locator("tbody", { has: page.getByRole("link", { name: "Device 3", exact: true }) });
    await row.getByRole("cell", { name: "tamper", exact: true }).waitFor({ timeout: 15_000 });
    expect(await row.getByRole("link", { name: "Device 3" }).getAttribute("href")).toBe(
      `/console/devices/${TAMPERED}`,
    );
    await row.getByRole("button", { name: "Acknowledge" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Note").fill("seen on camera, on my way");
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await row.getByRole("cell", { name: "ACKNOWLEDGED" }).waitFor();
  });

  it("ends a rider's session without a fee, and the API shows it ended, NOT_CHARGED", async () => {
    const headers = { authorization: `Bearer ${riderToken}` };
    const lock = await site.app.inject({
      method: "POST",
      url: `/device/v1/devices/${RIDDEN}/commands`,
      headers,
      payload: { command: "lock" },
    });
    expect(lock.statusCode, lock.body).toBe(200);
    expect((await settledCommand(lock.json<Command>().id)).state.value).toBe("SUCCESS");
    const sessions = async () =>
      (await site.app.inject({ method: "GET", url: "/session/v2/sessions?limit=10", headers })).json<{
        data: { id: string; status: string; payment: { status: string } | null }[];
      }>().data;
    await expect.poll(async () => (await sessions()).map((s) => s.status)).toEqual(["active"]);
    const id = (await sessions())[0]?.id ?? "";

    const page = await signedIn("operator", `/console/sessions/${id}`);
    await expect.poll(() => page.getByTestId("session-status").textContent()).toBe("active");
    await page.getByRole("button", { name: "End session" }).click();
    const dialog = page.getByRole("dialog", { name: "End session" });
    await dialog.getByLabel("Without fee").check();
    await dialog.getByLabel("Reason").fill("latch fault, the rider was stuck");
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.getByTestId("payment-status").textContent()).toBe("NOT_CHARGED");
    expect(await sessions()).toEqual([
      expect.objectContaining({
        id,
        status: "ended",
        payment: expect.objectContaining({ status: "NOT_CHARGED" }),
      }),
    ]);
  });

  it("shows a viewer the same pages with no action controls", async () => {
    const actions = /Force|Sync|Acknowledge|Assign|Clear|End session|Mark payment/;
    const actionButtons = async (page: Page) =>
      (await page.locator("main").getByRole("button").allTextContents()).filter((b) => actions.test(b));
    const page = await signedIn("viewer", `/console/devices/${LOCKER}`);
    await expect.poll(() => page.getByTestId("device-state").textContent()).toBe("UNLOCKED");
    expect(await actionButtons(page)).toEqual([]);
    await page.goto(`${base}/console/alarms`);
    await page.getByRole("link", { name: "Device 3", exact: true }).first().waitFor();
    expect(await actionButtons(page)).toEqual([]);
    await page.goto(`${base}/console/sessions`);
    await page
      .getByRole("link", { name: /^[0-9a-f]{8}$/ })
      .first()
      .click();
    await expect.poll(() => page.getByTestId("session-status").textContent()).toBe("ended");
    expect(await actionButtons(page)).toEqual([]);
  });
});
