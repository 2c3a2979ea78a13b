import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccessListMemberList } from "../../shared/api/access-list.ts";
import { declareKeysFixture, HOSTILE, KEYS } from "../support/console-keys-fixture.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CLIENTS, fx } from "../support/fixture-site.ts";
import { accessibilityViolations, fitsWidth } from "../support/page-accessibility.ts";

const LIST = KEYS.list;
const NEW_PHONE = "+31612345679";
const PHONE = { width: 390, height: 844 };
const usersUrl = `/access-control/v1/mgmt/access-lists/${LIST}/users`;

// An operator sees a list's members and invites, invites a phone number, revokes it and removes a member
// through dialogs; a viewer sees the same with no action controls.
describe("the console's access lists", () => {
  let site: ConsoleSite;
  let madeAt: string;
  beforeAll(async () => {
    site = await startConsoleSite();
    await declareKeysFixture(site.h);
    madeAt = site.h.clock.now().toISOString();
    for (const payload of [{ user_id: KEYS.riderA }, { phone_number: KEYS.invitedPhone, comment: HOSTILE }]) {
      const res = await site.h.call(CLIENTS.admin, { method: "POST", url: usersUrl, payload });
      expect(res.statusCode, res.body).toBe(204);
    }
  });
  afterAll(() => site?.close());

  async function publicMembers() {
    const res = await site.h.call(CLIENTS.admin, { method: "GET", url: usersUrl });
    expect(res.statusCode, res.body).toBe(200);
    return AccessListMemberList.parse(res.json()).data;
  }

  const row = (page: Page, table: "Members" | "Invites", text: string) =>
    page.getByRole("table", { name: table }).getByRole("row").filter({ hasText: text });

  it("lists the list and shows its members and invites, a hostile name and comment as text, to a viewer without actions", async () => {
    const page = await site.signedIn("viewer", "/console/access-lists");
    const listRow = page.getByRole("row").filter({ hasText: "#H1 House one" });
    await listRow.waitFor();
    expect(await listRow.getByRole("cell").allTextContents()).toEqual([
      HOSTILE,
      "closed",
      "#H1 House one",
      "1",
      "1",
      "1",
    ]);
    await listRow.getByRole("link", { name: HOSTILE }).click();
    expect(new URL(page.url()).pathname).toBe(`/console/access-lists/${LIST}`);
    await page.getByRole("heading", { name: HOSTILE }).waitFor();
    expect(await page.getByRole("link", { name: "#H1 House one" }).getAttribute("href")).toBe(
      `/console/locations/${fx.location("H1")}`,
    );
    const member = row(page, "Members", KEYS.riderA);
    await member.waitFor();
    expect(await member.getByRole("link", { name: KEYS.riderA }).getAttribute("href")).toBe(
      `/console/riders/${KEYS.riderA}`,
    );
    expect(await member.textContent()).toContain("included:active");
    const invite = row(page, "Invites", KEYS.invitedPhone);
    expect(await invite.getByRole("cell").allTextContents()).toEqual(
      expect.arrayContaining(["invited", `${madeAt.slice(0, 19).replace("T", " ")} UTC`, HOSTILE]),
    );
    expect(await page.locator("main img").count()).toBe(0);
    expect(await accessibilityViolations(page)).toEqual([]);
    for (const name of ["Add member", "Invite", /^Remove member/, /^Revoke invite/])
      expect(await page.getByRole("button", { name }).count()).toBe(0);
    await page.close();
  });

  it("adds a member, invites a phone number, revokes the invite and removes a member, each confirmed in a dialog", async () => {
    const page = await site.signedIn("operator", `/console/access-lists/${LIST}`);
    await row(page, "Members", KEYS.riderA).waitFor();

    await page.getByRole("button", { name: "Add member" }).click();
    const add = page.getByRole("dialog", { name: "Add member" });
    await add.getByLabel("User id").fill(KEYS.riderB);
    await add.getByLabel("Comment").fill(HOSTILE);
    expect(await accessibilityViolations(page)).toEqual([]);
    await add.getByRole("button", { name: "Confirm" }).click();
    await row(page, "Members", KEYS.riderB).getByText("included:active").waitFor();
    expect(await row(page, "Members", KEYS.riderB).textContent()).toContain(HOSTILE);
    expect((await publicMembers()).find((m) => m.user_id === KEYS.riderB)?.status).toBe("included:active");

    await page.getByRole("button", { name: "Invite", exact: true }).click();
    const invite = page.getByRole("dialog", { name: "Invite" });
    await invite.getByLabel("Phone number").fill("0612");
    await invite.getByRole("button", { name: "Confirm" }).click();
    await invite.getByRole("alert").waitFor();
    await invite.getByLabel("Phone number").fill(NEW_PHONE);
    await invite.getByRole("button", { name: "Confirm" }).click();
    await row(page, "Invites", NEW_PHONE).waitFor();
    expect((await publicMembers()).some((m) => m.phone_number === NEW_PHONE && m.status === "invited")).toBe(
      true,
    );

    await page.getByRole("button", { name: `Revoke invite ${NEW_PHONE}` }).click();
    await page
      .getByRole("dialog", { name: `Revoke invite ${NEW_PHONE}` })
      .getByRole("button", { name: "Confirm" })
      .click();
    await page.getByRole("button", { name: `Revoke invite ${NEW_PHONE}` }).waitFor({ state: "detached" });
    expect((await publicMembers()).some((m) => m.phone_number === NEW_PHONE)).toBe(false);

    await page.getByRole("button", { name: `Remove member ${KEYS.riderA}` }).click();
    await page
      .getByRole("dialog", { name: `Remove member ${KEYS.riderA}` })
      .getByRole("button", { name: "Confirm" })
      .click();
    await row(page, "Members", KEYS.riderA).getByText("excluded:removed").waitFor();
    expect(await page.getByRole("button", { name: `Remove member ${KEYS.riderA}` }).count()).toBe(0);
    expect((await publicMembers()).find((m) => m.user_id === KEYS.riderA)?.status).toBe("excluded:removed");
    await page.close();
  });

  it("fits a phone 390 px wide: the list and an access list", async () => {
    for (const path of ["/console/access-lists", `/console/access-lists/${LIST}`]) {
      const page = await site.signedIn("operator", path, PHONE);
      await page.locator("table").first().waitFor();
      expect(await fitsWidth(page), path).toBe(true);
      await page.close();
    }
  });
});
