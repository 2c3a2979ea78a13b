import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";

// Every console address is a deep link: pasted into a ticket, it opens that view after sign-in.
describe("the console's addresses", () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite();
  });
  afterAll(() => site?.close());

  it("keeps the pasted address through sign-in, and says when nothing of the console is there", async () => {
    const page = await site.signedIn("viewer", "/console/no-such-view");
    expect(new URL(page.url()).pathname).toBe("/console/no-such-view");
    await page.getByRole("heading", { name: "No such page" }).waitFor();
    expect(await page.getByRole("main").textContent()).toContain("/console/no-such-view");
    await page.close();
  });
});
