import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WhitelistEntityList } from "../../shared/api/whitelist.ts";
import { declareKeysFixture, HOSTILE, KEYS, reportKeyVersion } from "../support/console-keys-fixture.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { accessibilityViolations, fitsWidth } from "../support/page-accessibility.ts";

const WL = KEYS.whitelist;
const PHONE = { width: 390, height: 844 };
/** How the page writes an instant. */
const shown = (at: string) => `${at.slice(0, 19).replace("T", " ")} UTC`;

// An operator sees a whitelist's cards, adds and removes one through dialogs, and follows the gateways'
// key sync from "pending" to "in sync"; a viewer sees the same with no action controls.
describe("the console's whitelists", () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite();
    await declareKeysFixture(site.h);
    // Both gateways hold the version the manifest made.
    await reportKeyVersion(site.h, "gw-a1", 1);
    await reportKeyVersion(site.h, "gw-a2", 1);
  });
  afterAll(() => site?.close());

  async function publicCards(): Promise<string[]> {
    const res = await site.h.call(CLIENTS.admin, {
      method: "GET",
      url: `/whitelist/v1/whitelists/${WL}/entities`,
    });
    expect(res.statusCode, res.body).toBe(200);
    return WhitelistEntityList.parse(res.json()).data.map((e) => e.id);
  }

  const cardRow = (page: Page, id: string) =>
    page.getByRole("table", { name: "Cards" }).getByRole("row").filter({ hasText: id });

  it("lists the whitelist and shows its cards with status, expiry and master key, hostile text as text", async () => {
    const page = await site.signedIn("viewer", "/console/whitelists");
    const row = page.getByRole("row").filter({ hasText: "Staff cards" });
    await row.waitFor();
    expect(await row.textContent()).toContain("2 gateways, none pending");
    await row.getByRole("link", { name: "Staff cards" }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/whitelists/${WL}`);
    await cardRow(page, KEYS.cards.master).waitFor();
    expect(await cardRow(page, KEYS.cards.master).getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["ACTIVE", "never", "master key"]),
    );
    expect(await cardRow(page, KEYS.cards.expiring).getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["ACTIVE", shown(KEYS.expiresAt), "no"]),
    );
    expect(await cardRow(page, KEYS.cards.inactive).getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["INACTIVE", HOSTILE]),
    );
    // The description and the comment are text, never markup.
    await page.getByText(HOSTILE).first().waitFor();
    expect(await page.locator("main img").count()).toBe(0);
    const targets = page.getByRole("list", { name: "Targets" });
    expect(await targets.getByRole("link", { name: "#L1 Lockers one" }).getAttribute("href")).toBe(
      `/console/locations/${fx.location("L1")}`,
    );
    expect(await targets.getByRole("link", { name: "#D1 Docks one · 1" }).getAttribute("href")).toBe(
      `/console/devices/${fx.device("D1", "1")}`,
    );
    await page.getByTestId("sync-gw-a1").getByText("gw-a1: in sync at version 1").waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);
    // Nothing to act with for a viewer.
    expect(await page.getByRole("button", { name: "Add card" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Remove card/ }).count()).toBe(0);
    await page.close();
  });

  it("adds a card in a dialog (the cloud's refusal shown first), follows the key sync, and removes it", async () => {
    site.h.clock.advance(60_000);
    const addedAt = site.h.clock.now().toISOString();
    const page = await site.signedIn("operator", `/console/whitelists/${WL}`);
    await cardRow(page, KEYS.cards.master).waitFor();

    await page.getByRole("button", { name: "Add card" }).click();
    const dialog = page.getByRole("dialog", { name: "Add card" });
    await dialog.getByLabel("Card id").fill("04:A1");
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await dialog
      .getByRole("alert")
      .getByText(/lowercase hexadecimal/)
      .waitFor();
    await dialog.getByLabel("Card id").fill("0e0f");
    await dialog.getByLabel("Expires at").fill("2030-05-01T10:00:00+02:00");
    await dialog.getByLabel("Master key").check();
    await dialog.getByRole("button", { name: "Confirm" }).click();
    await cardRow(page, "0e0f").waitFor();
    expect(await cardRow(page, "0e0f").getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["ACTIVE", "2030-05-01 08:00:00 UTC", "master key"]),
    );
    expect(await publicCards()).toContain("0e0f");

    // The gateways got version 2 and have not said they hold it.
    const gw1 = page.getByTestId("sync-gw-a1");
    await gw1.getByText(`pending on gw-a1 since ${shown(addedAt)}`).waitFor();
    await page.getByTestId("sync-gw-a2").getByText("pending on gw-a2").waitFor();
    await reportKeyVersion(site.h, "gw-a1", 2);
    await page.getByRole("button", { name: "Refresh" }).click();
    await gw1.getByText("gw-a1: in sync at version 2").waitFor();
    await page.getByTestId("sync-gw-a2").getByText("pending on gw-a2").waitFor();

    await page.getByRole("button", { name: "Remove card 0e0f" }).click();
    await page
      .getByRole("dialog", { name: "Remove card 0e0f" })
      .getByRole("button", { name: "Confirm" })
      .click();
    await gw1.getByText("pending on gw-a1").waitFor();
    expect(await cardRow(page, "0e0f").count()).toBe(0);
    expect(await publicCards()).not.toContain("0e0f");

    // The audit log names the staff member for both, and links back to the whitelist.
    await page.getByRole("link", { name: "This whitelist in the audit log" }).click();
    const removed = page.getByRole("row").filter({ hasText: "whitelist.card-remove" });
    await removed.waitFor();
    expect(await removed.textContent()).toContain("operator@a.example");
    expect(await page.getByRole("row").filter({ hasText: "whitelist.card-add" }).textContent()).toContain(
      'card_id: — → "0e0f"',
    );
    await removed.getByRole("link", { name: `whitelist ${WL}` }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/whitelists/${WL}`);
    await page.close();
  });

  it("refuses a viewer's card through the API even with the session's CSRF token", async () => {
    const page = await site.signedIn("viewer", `/console/whitelists/${WL}`);
    const who = await page.request.get(`${site.base}/console/api/session`);
    const { csrf_token } = (await who.json()) as { csrf_token: string };
    const refused = await page.request.post(`${site.base}/console/api/whitelists/${WL}/cards`, {
      headers: { "x-csrf-token": csrf_token },
      data: { id: "0f0f" },
    });
    expect(refused.status()).toBe(403);
    expect(await publicCards()).not.toContain("0f0f");
    await page.close();
  });

  it("fits a phone 390 px wide: the list and a whitelist", async () => {
    for (const [path, heading] of [
      ["/console/whitelists", "Whitelists"],
      [`/console/whitelists/${WL}`, "Staff cards"],
    ] as const) {
      const page = await site.signedIn("operator", path, PHONE);
      await page.getByRole("heading", { name: heading, exact: true }).waitFor();
      await page.locator("table").first().waitFor();
      expect(await fitsWidth(page), path).toBe(true);
      await page.close();
    }
  });
});
