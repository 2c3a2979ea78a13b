import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SessionV2List } from "../../shared/api/session.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fx, OP_A } from "../support/fixture-site.ts";
import { fitsWidth } from "../support/page-accessibility.ts";
import { type Caller, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

const PRICED = fx.device("L1", "2");
const PRICED_2 = fx.device("L1", "3");
const HOSTILE = `<img src=x onerror=alert(1)>`;
const PHONE = { width: 390, height: 844 };

// The operator ends a rider's session from the console; the public API and the audit log show it.
describe("the console's sessions and audit log", () => {
  let site: ConsoleSite;
  let f: RiderFlow;
  let alice: Caller;
  let bob: Caller;

  beforeAll(async () => {
    site = await startConsoleSite();
    f = riderFlow(site.h);
    alice = await rider(site.h, OP_A, "alice");
    bob = await rider(site.h, OP_A, "bob");
    await f.lock(alice, PRICED);
    await f.lock(bob, PRICED_2);
  });
  afterAll(() => site?.close());

  async function publicSession(who: Caller) {
    const res = await f.request(who, "/session/v2/sessions?limit=10");
    expect(res.statusCode, res.body).toBe(200);
    const [session] = SessionV2List.parse(res.json()).data;
    if (!session) throw new Error("the rider has no session");
    return session;
  }

  it("lets an operator end a rider's active session without a fee, and the audit log names them", async () => {
    const id = (await publicSession(alice)).id;
    const page = await site.signedIn("operator", "/console/sessions");
    await page.getByRole("link", { name: id.slice(0, 8) }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/sessions/${id}`);
    await expect.poll(() => page.getByTestId("session-status").textContent()).toBe("active");

    await page.getByRole("button", { name: "End session" }).click();
    const dialog = page.getByRole("dialog", { name: "End session" });
    await dialog.getByLabel("Without fee").check();
    await dialog.getByLabel("Reason").fill(HOSTILE);
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.getByTestId("payment-status").textContent()).toBe("NOT_CHARGED");
    expect(await page.getByTestId("session-status").textContent()).toBe("ended");
    expect(await page.getByRole("button", { name: "End session" }).count()).toBe(0);

    // What the public API shows the rider.
    expect(await publicSession(alice)).toMatchObject({
      id,
      status: "ended",
      payment: { status: "NOT_CHARGED" },
    });

    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit" }).click();
    const row = page.getByRole("row").filter({ hasText: "session.end-without-fee" });
    await row.waitFor();
    expect(await row.textContent()).toContain("operator@a.example");
    // The hostile reason is text, never markup.
    expect(await row.textContent()).toContain(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await row.getByRole("cell").filter({ hasText: "status" }).textContent()).toContain('"ended"');
    await row.getByRole("link", { name: `session ${id}` }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/sessions/${id}`);
    await page.close();
  });

  it("lists a PATCH made through the API above the end, with its field-level changes as text", async () => {
    // A second later than the end (entries of one instant are ordered by id).
    site.h.clock.advance(1_000);
    const patched = await site.h.call(CLIENTS.basic, {
      method: "PATCH",
      url: `/location/v1/locations/${fx.location("L1")}`,
      payload: { label: HOSTILE },
    });
    expect(patched.statusCode, patched.body).toBe(204);
    const page = await site.signedIn("viewer", "/console/audit");
    const rows = page.getByRole("row");
    await rows.filter({ hasText: "location.patch" }).waitFor();
    // Newest first: the header, the PATCH, then the session's end.
    const [patch, end] = [await rows.nth(1).textContent(), await rows.nth(2).textContent()];
    expect(patch).toContain("location.patch");
    expect(patch).toContain(`api_client ${CLIENTS.basic}`);
    expect(patch).toContain(`label: "Lockers one" → ${JSON.stringify(HOSTILE)}`);
    expect(end).toContain("session.end-without-fee");
    expect(await page.locator("main img").count()).toBe(0);
    // A location has no page of its own here: its subject is plain text.
    expect(await rows.nth(1).getByRole("link").count()).toBe(0);
    await page.close();
  });

  it("shows a viewer the same session with no End session control, and the API refuses the viewer", async () => {
    const id = (await publicSession(bob)).id;
    const page = await site.signedIn("viewer", `/console/sessions/${id}`);
    await expect.poll(() => page.getByTestId("session-status").textContent()).toBe("active");
    expect(await page.getByRole("button", { name: "End session" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Mark payment/ }).count()).toBe(0);

    // The viewer's own session, CSRF token and all: the cloud still refuses, and nothing changes.
    const who = await page.request.get(`${site.base}/console/api/session`);
    const { csrf_token } = (await who.json()) as { csrf_token: string };
    const refused = await page.request.post(`${site.base}/console/api/sessions/${id}/end`, {
      headers: { "x-csrf-token": csrf_token },
      data: { without_fee: true },
    });
    expect(refused.status()).toBe(403);
    // Refused for the role, not for a missing token.
    expect(await refused.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN", error_message: /viewer/ });
    expect((await publicSession(bob)).status).toBe("active");
    await page.close();
  });

  it("fits a phone 390 px wide: the session list, a session and the audit log", async () => {
    const id = (await publicSession(bob)).id;
    for (const [path, heading] of [
      ["/console/sessions", "Sessions"],
      [`/console/sessions/${id}`, `Session ${id.slice(0, 8)}`],
      ["/console/audit", "Audit"],
    ] as const) {
      const page = await site.signedIn("operator", path, PHONE);
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await page.locator("table, dl").first().waitFor();
      expect(await fitsWidth(page), path).toBe(true);
      await page.close();
    }
  });

  it("moves a payment where the payment machine allows, confirmed in a dialog", async () => {
    const id = (await publicSession(bob)).id;
    // An hour parked, so the session has a fee to pay.
    site.h.clock.advance(60 * 60_000);
    const page = await site.signedIn("operator", `/console/sessions/${id}`);
    await page.getByRole("button", { name: "End session" }).click();
    await page.getByRole("dialog", { name: "End session" }).getByRole("button", { name: "Confirm" }).click();
    await expect.poll(() => page.getByTestId("payment-status").textContent()).toBe("PENDING");
    // PENDING may become PAID but never REFUNDED.
    expect(await page.getByRole("button", { name: "Mark payment REFUNDED" }).count()).toBe(0);
    await page.getByRole("button", { name: "Mark payment PAID" }).click();
    await page
      .getByRole("dialog", { name: "Mark payment PAID" })
      .getByRole("button", { name: "Confirm" })
      .click();
    await expect.poll(() => page.getByTestId("payment-status").textContent()).toBe("PAID");
    expect(await page.getByRole("button", { name: "Mark payment REFUNDED" }).count()).toBe(1);
    const payment = (await publicSession(bob)).payment;
    expect(payment?.status).toBe("PAID");
    await page.close();
  });
});
