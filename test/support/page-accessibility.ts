import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { Page } from "playwright-core";

let source: string | undefined;

/**
 * The accessibility rules axe-core finds broken on the page as it is now (rule id and the first offending
 * element), WCAG A and AA. Evaluated through the browser's debugging protocol, so the console's CSP (scripts
 * from its own origin only) stays as it is.
 */
export async function accessibilityViolations(page: Page): Promise<string[]> {
  source ??= readFileSync(createRequire(import.meta.url).resolve("axe-core/axe.min.js"), "utf8");
  return await page.evaluate<string[]>(
    `${source};
    axe
      .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa"] } })
      .then((r) => r.violations.map((v) => v.id + ": " + (v.nodes[0] ? v.nodes[0].target.join(" ") : "")))`,
  );
}

/** Whether the page fits its viewport's width: nothing to scroll sideways. */
export const fitsWidth = (page: Page) =>
  page.evaluate<boolean>("document.documentElement.scrollWidth <= document.documentElement.clientWidth");
