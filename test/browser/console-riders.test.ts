import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { fx, OP_A, OP_B } from "../support/fixture-site.ts";
import { accessibilityViolations, fitsWidth } from "../support/page-accessibility.ts";
import { type Caller, type RiderFlow, rider, riderFlow } from "../support/rider-sessions.ts";

const DEVICE = fx.device("L1", "2");
const HOSTILE = `<img src=x onerror=alert(1)>`;
const PHONE = { width: 390, height: 844 };

// An operator looks a rider up, follows their session, and revokes their tokens; the public API refuses them.
describe("the console's riders", () => {
  let site: ConsoleSite;
  let f: RiderFlow;
  let alice: Caller;
  let hostile: Caller;
  let bea: Caller;

  beforeAll(async () => {
    site = await startConsoleSite();
    f = riderFlow(site.h);
    alice = await rider(site.h, OP_A, "alice");
    hostile = await rider(site.h, OP_A, HOSTILE);
    bea = await rider(site.h, OP_B, "bea");
    await f.lock(alice, DEVICE);
  });
  afterAll(() => site?.close());

  const ownSessions = async (who: Caller) => (await f.request(who, "/session/v2/sessions")).statusCode;

  it("looks a rider up by id, shows their session, and revokes their tokens in a dialog", async () => {
    const page = await site.signedIn("operator", "/console/riders");
    await page.getByLabel("Rider id").fill(alice.id);
    await page.getByRole("button", { name: "Look up" }).click();
    await expect.poll(() => page.getByTestId("rider-user-id").textContent()).toBe("alice");
    expect(new URL(page.url()).pathname).toBe(`/console/riders/${alice.id}`);
    const row = page.getByRole("row").filter({ hasText: "active" });
    await row.waitFor();
    const link = row.getByRole("link").first();
    const href = (await link.getAttribute("href")) ?? "";
    expect(href).toMatch(/^\/console\/sessions\/[0-9a-f-]{36}$/);
    await link.click();
    await page.getByTestId("session-status").waitFor();
    expect(new URL(page.url()).pathname).toBe(href);
    await page.goBack();

    expect(await ownSessions(alice)).toBe(200);
    await page.getByRole("button", { name: "Revoke tokens" }).click();
    const dialog = page.getByRole("dialog", { name: "Revoke tokens" });
    await dialog.getByLabel("Reason").fill("phone reported stolen");
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await page.getByRole("status").filter({ hasText: "Revoked" }).waitFor();
    // The rider's tokens (of the generation before the revocation) are refused by the public API.
    expect(await ownSessions(alice)).toBe(401);

    await page.getByRole("navigation", { name: "Console" }).getByRole("link", { name: "Audit" }).click();
    const entry = page.getByRole("row").filter({ hasText: "rider.revoke_tokens" });
    await entry.waitFor();
    expect(await entry.textContent()).toContain("phone reported stolen");
    // The audit entry links back to the rider's page.
    await entry.getByRole("link", { name: `rider ${alice.id}` }).click();
    await expect.poll(() => page.getByTestId("rider-user-id").textContent()).toBe("alice");
    await page.close();
  });

  it("says so when no rider has the id, another operator's rider included", async () => {
    const page = await site.signedIn("operator", `/console/riders/${bea.id}`);
    await page
      .getByRole("alert")
      .filter({ hasText: `No rider with id ${bea.id}` })
      .waitFor();
    await page.getByLabel("Rider id").fill("not-a-rider");
    await page.getByRole("button", { name: "Look up" }).click();
    await page.getByRole("alert").filter({ hasText: "No rider with id not-a-rider" }).waitFor();
    await page.close();
  });

  it("shows a viewer the rider with no Revoke tokens control, and rider data as text", async () => {
    const page = await site.signedIn("viewer", `/console/riders/${hostile.id}`);
    await expect.poll(() => page.getByTestId("rider-user-id").textContent()).toBe(HOSTILE);
    expect(await page.locator("main img").count()).toBe(0);
    expect(await page.getByRole("button", { name: "Revoke tokens" }).count()).toBe(0);
    expect(await ownSessions(hostile)).toBe(200);
    await page.close();
  });

  it("fits a phone 390 px wide, with no accessibility violation axe finds", async () => {
    const page = await site.signedIn("operator", `/console/riders/${alice.id}`, PHONE);
    await page.getByTestId("rider-id").waitFor();
    expect(await fitsWidth(page)).toBe(true);
    expect(await accessibilityViolations(page)).toEqual([]);
    await page.close();
  });
});
