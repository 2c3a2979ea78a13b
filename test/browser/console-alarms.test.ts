import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createAlarmService } from "../../cloud/alarms/alarm-service.ts";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import { staffRepository } from "../../cloud/staff/staff-repository.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { fx, OP_A } from "../support/fixture-site.ts";

const GW = "gw-a1";
const LOCKER = fx.device("L1", "1");
const HOSTILE = "<img src=x onerror=alert(1)>";

// The alarm inbox: a tamper the gateway reports shows after a reload, an operator acknowledges it with a
// note in a dialog (the store and the audit log say so), and a viewer sees it with no action controls.
describe("the console's alarm inbox", () => {
  let site: ConsoleSite;
  let seq = 0;
  beforeAll(async () => {
    site = await startConsoleSite();
  });
  afterAll(() => site?.close());

  const tamper = (deviceId = LOCKER) =>
    site.h.report(GW, {
      type: "hardware_event",
      gateway_id: GW,
      seq: ++seq,
      observed_at: site.h.clock.now().toISOString(),
      device_id: deviceId,
      source: "bus0/1/1",
      event: "tamper",
      detail: "",
    });

  const alarmRow = (page: Page, alias = "1") =>
    page.locator("tbody", { has: page.getByRole("link", { name: `Device ${alias}`, exact: true }) });

  it("shows a reported tamper after a reload, and the operator acknowledges it with a note", async () => {
    const page = await site.signedIn("operator", "/console/alarms");
    await page.getByRole("heading", { name: "Alarms" }).waitFor();
    await page.getByText("No alarms.").waitFor();
    await tamper();
    await page.reload();
    const row = alarmRow(page);
    await row.waitFor();
    expect(await row.getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["CRITICAL", "tamper", "Device 1", "ACTIVE", "1"]),
    );
    expect(await row.getByRole("link", { name: "Device 1" }).getAttribute("href")).toBe(
      `/console/devices/${LOCKER}`,
    );

    await row.getByRole("button", { name: "Acknowledge" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Note").fill(`On my way ${HOSTILE}`);
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await row.getByRole("cell", { name: "ACKNOWLEDGED" }).waitFor();
    expect(await row.getByRole("button", { name: "Acknowledge" }).count()).toBe(0);

    const alarms = createAlarmService({ db: site.h.db, clock: site.h.clock });
    const [alarm] = await alarms.list(OP_A);
    const operator = await staffRepository(site.h.db).findByEmail("operator@a.example");
    const me = { kind: "staff", id: operator?.id };
    expect(alarm).toMatchObject({
      status: "ACKNOWLEDGED",
      acknowledged: { by: me, note: `On my way ${HOSTILE}` },
    });
    const audit = await listAudit(site.h.db, OP_A, { subject: { type: "alarm", id: alarm?.id ?? "" } });
    expect(audit.data).toMatchObject([
      { action: "alarm.acknowledge", actor: me, comment: `On my way ${HOSTILE}` },
    ]);

    // The history shows the note as text: the hostile string is not markup.
    await row.getByRole("button", { name: "History" }).click();
    const history = row.getByRole("list", { name: "History" });
    await history.getByText(HOSTILE, { exact: false }).waitFor();
    expect(await history.textContent()).toContain("acknowledge by operator@a.example");
    expect(await page.locator("img").count()).toBe(0);
    await page.close();
  });

  // Follows the operator's test: the alarm it acknowledged is the viewer's to see.
  it("shows a viewer the inbox with no action controls, fitting a phone, and the API refuses its acknowledge", async () => {
    const page = await site.signedIn("viewer", "/console/alarms", { width: 390, height: 844 });
    const row = alarmRow(page);
    await row.waitFor();
    for (const name of ["Acknowledge", "Assign", "Clear"])
      expect(await page.getByRole("button", { name }).count(), name).toBe(0);
    // A string to evaluate: the test's own types have no DOM.
    const [scrolled, wide] = await page.evaluate<number[]>(
      "[document.documentElement.scrollWidth, document.documentElement.clientWidth]",
    );
    expect(scrolled).toBe(wide);

    const id = await row.getAttribute("data-alarm");
    const refused = await page.evaluate(async (alarmId) => {
      const session = (await (await fetch("/console/api/session")).json()) as { csrf_token: string };
      const res = await fetch(`/console/api/alarms/${alarmId}/acknowledge`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-csrf-token": session.csrf_token },
        body: JSON.stringify({ note: "a viewer's note" }),
      });
      return { status: res.status, body: await res.json() };
    }, id);
    expect(refused).toMatchObject({ status: 403, body: { error_code: "ERRORS.FORBIDDEN" } });
    const { alarm, history } = await createAlarmService({ db: site.h.db, clock: site.h.clock }).get(
      OP_A,
      id ?? "",
    );
    expect(alarm.status).toBe("ACKNOWLEDGED");
    expect(history.map((c) => c.action)).toEqual(["raise", "acknowledge"]);
    await page.close();
  });

  it("the operator assigns an alarm by keyboard and clears it; the status filter is kept in the address", async () => {
    const second = fx.device("L1", "2");
    await tamper(second);
    const page = await site.signedIn("operator", "/console/alarms");
    const row = alarmRow(page, "2");
    await row.getByRole("button", { name: "Assign" }).click();
    const assignee = page.getByRole("dialog").getByLabel("Assignee");
    await assignee.fill("admin@a.example");
    await assignee.press("Enter");
    await row.getByRole("cell", { name: "admin@a.example" }).waitFor();

    await row.getByRole("button", { name: "Clear" }).click();
    await page.getByRole("dialog").getByLabel("Note").fill("latch reseated");
    await page.getByRole("dialog").getByRole("button", { name: "Confirm" }).click();
    await row.getByRole("cell", { name: "CLEARED" }).waitFor();
    expect(await row.getByRole("button", { name: "Clear" }).count()).toBe(0);

    const admin = await staffRepository(site.h.db).findByEmail("admin@a.example");
    const alarms = createAlarmService({ db: site.h.db, clock: site.h.clock });
    const [alarm] = await alarms.list(OP_A, { device_id: second });
    expect(alarm).toMatchObject({
      status: "CLEARED",
      assignee: { kind: "staff", id: admin?.id },
      cleared: { note: "latch reseated" },
    });

    await page.getByLabel("Status").selectOption({ label: "Open" });
    await page.getByRole("button", { name: "Filter" }).click();
    await alarmRow(page, "2").waitFor({ state: "detached" });
    expect(new URL(page.url()).searchParams.get("status")).toBe("ACTIVE,ACKNOWLEDGED");
    await alarmRow(page, "1").waitFor();
    await page.reload();
    await alarmRow(page, "1").waitFor();
    expect(await alarmRow(page, "2").count()).toBe(0);
    await page.close();
  });
});
