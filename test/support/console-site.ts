import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import type { AppDeps } from "../../cloud/app.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { launchBrowser } from "./browser.ts";
import { type CloudHarness, startCloudHarness } from "./cloud-harness.ts";
import { CONSOLE_PASSWORD, createConsoleStaff } from "./console-api.ts";
import { OP_A } from "./fixture-site.ts";

export { CONSOLE_PASSWORD };

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
  for (const role of ["viewer", "operator", "admin"] as const) {
    await createConsoleStaff(h, `${role}@a.example`, role, OP_A);
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
