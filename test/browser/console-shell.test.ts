import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import { launchBrowser } from "../support/browser.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { OP_A } from "../support/fixture-site.ts";

const PASSWORD = "a console password";

// The operator console's shell: one page for every address under /console/, only the cloud's own script,
// never framed, and a sign-in form a phone can use.
describe("the operator console's shell", () => {
  let h: CloudHarness;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    h = await startCloudHarness();
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    // The least cost secrets.ts accepts, as the other suites that verify passwords.
    const staff = createStaffService({ db: h.db, clock: h.clock, cost: { ln: 10, r: 8, p: 1 } });
    const created = await staff.create({
      email: "ann@example.com",
      role: "operator",
      operatorId: OP_A,
      password: PASSWORD,
    });
    if (typeof created === "string") throw new Error(created);
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("serves the same page at every console address, with no inline script and a policy that forbids one", async () => {
    const pages = await Promise.all(
      [
        "/console",
        "/console/",
        "/console/devices/0c4bea57-90a8-594e-86d5-7c91b183663c",
        "/console/alarms",
      ].map((p) => fetch(`${base}${p}`)),
    );
    const bodies = await Promise.all(pages.map((r) => r.text()));
    for (const r of pages) {
      expect(r.status).toBe(200);
      expect(r.headers.get("content-type")).toMatch(/^text\/html/);
      const csp = r.headers.get("content-security-policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
    }
    expect(new Set(bodies).size).toBe(1);
    const scripts = [...(bodies[0] as string).matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attrs, inline] of scripts) {
      expect(attrs).toMatch(/src="\/console\/assets\/console-[0-9a-f]{12}\.js"/);
      expect(inline).toBe("");
    }
    // Its assets are kept for good (new builds get new names); an unknown console API address is a 404.
    const src = /src="([^"]+)"/.exec(scripts[0]?.[1] ?? "")?.[1] as string;
    const js = await fetch(`${base}${src}`);
    expect(js.status).toBe(200);
    expect(js.headers.get("cache-control")).toContain("immutable");
    const api = await fetch(`${base}/console/api/no-such-thing`);
    expect(api.status).toBe(404);
    expect(await api.json()).toMatchObject({ status_code: 404 });
  });

  it("opens on the sign-in form at a phone's width, labelled, with no sideways scrolling and no page error", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/console/devices/0c4bea57-90a8-594e-86d5-7c91b183663c`);
    await page.getByLabel("Email").waitFor();
    await expect(page.getByLabel("Password").getAttribute("type")).resolves.toBe("password");
    await expect(page.getByRole("button", { name: "Sign in" }).isEnabled()).resolves.toBe(true);
    const widths = await page.evaluate<number[]>("[document.documentElement.scrollWidth, window.innerWidth]");
    expect(widths[0]).toBeLessThanOrEqual(widths[1] as number);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("signs a staff member in, refusing a wrong password without a word about which was wrong, and out again", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${base}/console/`);
    await page.getByLabel("Email").fill("ann@example.com");
    await page.getByLabel("Password").fill("not the password");
    await page.getByRole("button", { name: "Sign in" }).click();
    const alert = page.getByRole("alert");
    await alert.waitFor();
    const refusal = await alert.textContent();
    // An unknown email gets the very same words: the page tells nobody which accounts exist.
    await page.getByLabel("Email").fill("nobody@example.com");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("button", { name: "Sign in" }).waitFor({ state: "visible" });
    await expect.poll(() => alert.textContent()).toBe(refusal);
    await page.getByLabel("Email").fill("ann@example.com");
    await page.getByLabel("Password").fill(PASSWORD);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Signed in as").waitFor();
    expect(await page.locator("header").textContent()).toContain("ann@example.com (operator)");
    // The session is the cookie's: a reload keeps it, signing out ends it.
    await page.reload();
    await page.getByText("Signed in as").waitFor();
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByLabel("Email").waitFor();
    await page.reload();
    await page.getByLabel("Email").waitFor();
    await page.close();
  });
});
