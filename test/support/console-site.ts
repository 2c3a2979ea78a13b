import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import type { AppDeps } from "../../cloud/app.ts";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { launchBrowser } from "./browser.ts";
import { type CloudHarness, startCloudHarness } from "./cloud-harness.ts";
import { OP_A } from "./fixture-site.ts";

export const CONSOLE_PASSWORD = "a console password";

/** The fixture site's cloud on a port, a browser, and staff of operator A in each role. */
export type ConsoleSite = {
  h: CloudHarness;
  base: string;
  browser: Browser;
  /** A page signed in as operator A's staff member of `role` (`<role>@a.example`), at `path` (default /console/). */
  signedIn(role: StaffRole, path?: string, viewport?: { width: number; height: number }): Promise<Page>;
  close(): Promise<void>;
};

/** `console`: the console's options, e.g. the overview map's tiles (`mapTiles`). */
export async function startConsoleSite(o: { console?: AppDeps["console"] } = {}): Promise<ConsoleSite> {
  const h = await startCloudHarness({ console: o.console });
  await h.app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
  // The least cost secrets.ts accepts, as the other suites that verify passwords.
  const staff = createStaffService({ db: h.db, clock: h.clock, cost: { ln: 10, r: 8, p: 1 } });
  for (const role of ["viewer", "operator", "admin"] as const) {
    const made = await staff.create({
      email: `${role}@a.example`,
      role,
      operatorId: OP_A,
      password: CONSOLE_PASSWORD,
    });
    if (typeof made === "string") throw new Error(made);
  }
  const browser = await launchBrowser();
  return {
    h,
    base,
    browser,
    async signedIn(role, path = "/console/", viewport = { width: 1280, height: 900 }) {
      const page = await browser.newPage({ viewport });
      await page.goto(`${base}${path}`);
      await page.getByLabel("Email").fill(`${role}@a.example`);
      await page.getByLabel("Password").fill(CONSOLE_PASSWORD);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("Signed in as").waitFor();
      return page;
    },
    async close() {
      await browser.close();
      await h.close();
    },
  };
}
