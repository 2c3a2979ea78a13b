import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type ConsoleSeeds, seedConsole } from "../support/console-seeds.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CONSOLE_VIEWS, type ConsoleView, openView, signIn } from "../support/console-views.ts";

const AXE = createRequire(import.meta.url).resolve("axe-core/axe.min.js");
/** Kept as CI artifacts: one desktop and one phone screenshot of each view. */
const SHOTS = path.resolve(import.meta.dirname, "../../test-results/console");
const DESKTOP = { width: 1280, height: 900 };
const PHONE = { width: 390, height: 844 };

type Violation = { id: string; impact: string | null; help: string; targets: string[] };

/** Runs axe-core on the page (injected as a script tag: only a context that bypasses the CSP allows it). */
async function axeViolations(page: Page): Promise<Violation[]> {
  if (!(await page.evaluate<boolean>("typeof axe === 'object'"))) await page.addScriptTag({ path: AXE });
  // A string to evaluate: the test's own types have no DOM.
  return page.evaluate<Violation[]>(`axe.run(document, { resultTypes: ["violations"] }).then((r) =>
    r.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      targets: v.nodes.map((n) => n.target.join(" ") + ": " + n.failureSummary),
    })))`);
}

const describeViolations = (vs: Violation[]) =>
  vs.map((v) => `${v.id} (${v.impact}): ${v.help}\n    ${v.targets.join("\n    ")}`).join("\n");

/** Browser contexts by role, each signed in once; `null` is a context nobody signed in to. */
function contexts(site: ConsoleSite, options: Parameters<ConsoleSite["browser"]["newContext"]>[0]) {
  const made = new Map<StaffRole | null, Promise<BrowserContext>>();
  return {
    of(role: StaffRole | null): Promise<BrowserContext> {
      let c = made.get(role);
      if (!c) {
        c = site.browser.newContext(options).then(async (ctx) => {
          if (role) await signIn(ctx, site.base, role);
          return ctx;
        });
        made.set(role, c);
      }
      return c;
    },
    async close() {
      for (const c of made.values()) await (await c).close();
    },
  };
}

/** Whether a control lies within the phone's width once scrolled into view (its own box may scroll). */
async function reachable(page: Page, name: string): Promise<boolean> {
  const control = page.getByRole("button", { name, exact: true }).first();
  await control.scrollIntoViewIfNeeded();
  const box = await control.boundingBox();
  return box !== null && box.x >= 0 && box.x + box.width <= PHONE.width;
}

// Every view of the console (test/support/console-views.ts) against the quality bars: no serious or
// critical accessibility violation, no sideways scrolling on a phone with its actions in reach, and a
// screenshot of each for the CI artifacts.
describe("the console's views, each against the quality bars", () => {
  let site: ConsoleSite;
  let seeds: ConsoleSeeds;
  let axeContexts: ReturnType<typeof contexts>;
  let phoneContexts: ReturnType<typeof contexts>;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    site = await startConsoleSite();
    seeds = await seedConsole(site);
    // Bypassing the CSP is for injecting axe only; the phone pass runs under the console's own policy.
    axeContexts = contexts(site, { viewport: DESKTOP, bypassCSP: true });
    phoneContexts = contexts(site, { viewport: PHONE });
  });
  afterAll(async () => {
    await axeContexts?.close();
    await phoneContexts?.close();
    await site?.close();
  });

  it.each(CONSOLE_VIEWS.map((v) => [v.name, v] as [string, ConsoleView]))(
    "%s has no serious or critical accessibility violation",
    async (_name, view) => {
      const page = await openView(await axeContexts.of(view.role), site.base, view, seeds);
      await page.screenshot({ path: path.join(SHOTS, `${view.name}.png`), fullPage: true });
      // Both colour schemes the console declares: contrast differs between them.
      await page.emulateMedia({ colorScheme: "light" });
      const found = [...(await axeViolations(page))];
      await page.emulateMedia({ colorScheme: "dark" });
      found.push(...(await axeViolations(page)).map((v) => ({ ...v, id: `${v.id} (dark)` })));
      const serious = found.filter((v) => v.impact === "serious" || v.impact === "critical");
      expect(serious, describeViolations(serious)).toEqual([]);
      await page.close();
    },
  );

  it.each(CONSOLE_VIEWS.map((v) => [v.name, v] as [string, ConsoleView]))(
    "%s fits a phone's width, its actions in reach",
    async (_name, view) => {
      const page = await openView(await phoneContexts.of(view.role), site.base, view, seeds);
      await page.screenshot({ path: path.join(SHOTS, `${view.name}-phone.png`), fullPage: true });
      const width = await page.evaluate<number>("document.documentElement.scrollWidth");
      expect(width, `${view.name} scrolls sideways`).toBeLessThanOrEqual(PHONE.width);
      for (const name of view.actions ?? [])
        expect(await reachable(page, name), `${name} out of reach on ${view.name}`).toBe(true);
      await page.close();
    },
  );
});
