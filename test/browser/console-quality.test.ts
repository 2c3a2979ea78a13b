import { mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { listAudit } from "../../cloud/audit/audit-log.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type ConsoleSeeds, seedConsole } from "../support/console-seeds.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { CONSOLE_VIEWS, type ConsoleView, openView, signIn } from "../support/console-views.ts";
import { OP_A } from "../support/fixture-site.ts";

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

/** What has the keyboard's focus: the element's tag and its text, and whether it is inside a dialog. */
const focused = (page: Page) =>
  page.evaluate<{ tag: string; text: string; inDialog: boolean }>(`(() => {
    const e = document.activeElement;
    return { tag: e?.tagName ?? "", text: (e?.textContent ?? "").trim(), inDialog: !!e?.closest("dialog") };
  })()`);

/** Presses Tab until the button named `name` has the focus (a page has far fewer than 50 stops before it). */
async function tabTo(page: Page, name: string): Promise<void> {
  for (let i = 0; i < 50; i++) {
    const f = await focused(page);
    if (f.tag === "BUTTON" && f.text === name) return;
    await page.keyboard.press("Tab");
  }
  throw new Error(`Tab never reached the button ${name}`);
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

  it("opens, fills and confirms Force unlock with the keyboard alone; Escape closes it; focus comes back", async () => {
    const context = await phoneContexts.of("operator");
    const device = CONSOLE_VIEWS.find((v) => v.name === "device") as ConsoleView;
    const page = await openView(context, site.base, device, seeds);

    await tabTo(page, "Force unlock");
    await page.keyboard.press("Enter");
    const dialog = page.getByRole("dialog", { name: "Force unlock" });
    await dialog.waitFor();
    expect((await focused(page)).inDialog).toBe(true);
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    expect(await focused(page)).toMatchObject({ tag: "BUTTON", text: "Force unlock" });

    await page.keyboard.press("Enter");
    await dialog.waitFor();
    expect(await focused(page)).toMatchObject({ tag: "SELECT", inDialog: true });
    // A closed select takes type-ahead: the letters pick the reason.
    await page.keyboard.type("OTHER");
    expect(await dialog.getByLabel("Reason").inputValue()).toBe("OTHER");
    await page.keyboard.press("Tab");
    await page.keyboard.type("latch stuck, rider waiting");
    await tabTo(page, "Confirm");
    await page.keyboard.press("Enter");
    await dialog.waitFor({ state: "detached" });
    expect(await focused(page)).toMatchObject({ tag: "BUTTON", text: "Force unlock" });
    await page.getByTestId("command-status").getByText("SENT").waitFor();

    const [entry] = (await listAudit(site.h.db, OP_A, { action: "command.force-unlock" })).data;
    expect(entry).toMatchObject({ reason: "OTHER", comment: "latch stuck, rider waiting" });
    await page.close();
  });
});
