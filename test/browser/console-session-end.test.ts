import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_IDLE_TIMEOUT_MS } from "../../cloud/staff/console-sessions.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { fx } from "../support/fixture-site.ts";

const L1 = fx.location("L1");
const ENDED = /Your session has ended/;

/** The sign-in form again, saying why. */
async function backAtSignIn(page: Page): Promise<void> {
  await page.getByRole("status").filter({ hasText: ENDED }).waitFor();
  await page.getByRole("button", { name: "Sign in" }).waitFor();
  expect(await page.getByText("Signed in as").count()).toBe(0);
  expect(await page.locator(".live-status").count()).toBe(0);
}

// A session that ends under an open page (signed out elsewhere, or idle too long) takes the page back to
// the sign-in form with a word on why, rather than leaving it on "Reconnecting…" and failing every call.
describe("the console when its session ends under an open page", () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite();
  });
  afterAll(() => site?.close());

  it("goes back to the sign-in form when the session is signed out elsewhere and the live stream is refused", async () => {
    const page = await site.signedIn("operator", `/console/locations/${L1}`);
    await page.locator(".live-status").getByText("Live", { exact: true }).waitFor();
    // Signed out through the API with the page's own cookie, from another request context.
    const who = await page.request.get(`${site.base}/console/api/session`);
    const { csrf_token } = (await who.json()) as { csrf_token: string };
    const out = await page.request.delete(`${site.base}/console/api/session`, {
      headers: { "x-csrf-token": csrf_token },
    });
    expect(out.status()).toBe(204);
    // The stream ends (as its next keep-alive would find); the browser's try to open it again gets 401.
    site.h.app.consoleLive.endAll();
    await backAtSignIn(page);

    // Signing in again opens the page the address names, the notice gone.
    await page.getByLabel("Email").fill("operator@a.example");
    await page.getByLabel("Password").fill("a console password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in as").waitFor();
    await page.getByRole("button", { name: "Refresh" }).waitFor();
    expect(new URL(page.url()).pathname).toBe(`/console/locations/${L1}`);
    expect(await page.getByText(ENDED).count()).toBe(0);
    await page.close();
  });

  it("goes back to the sign-in form when an API call answers 401 after the idle timeout", async () => {
    const page = await site.signedIn("viewer", `/console/locations/${L1}`);
    await page.getByRole("button", { name: "Refresh" }).waitFor();
    site.h.clock.advance(DEFAULT_IDLE_TIMEOUT_MS + 60_000);
    await page.getByRole("button", { name: "Refresh" }).click();
    await backAtSignIn(page);
    await page.close();
  });
});
