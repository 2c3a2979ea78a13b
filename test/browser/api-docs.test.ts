import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";

// The API's interactive documentation, as an integrator opens it: it must render from what the cloud serves
// alone (no asset from elsewhere), list the operations of the served OpenAPI document, and raise no error.
describe("the API documentation in a browser", () => {
  let h: CloudHarness;
  let browser: Browser;
  let base: string;

  beforeAll(async () => {
    h = await startCloudHarness();
    await h.app.listen({ port: 0, host: "127.0.0.1" });
    base = `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  afterAll(async () => {
    await browser?.close();
    await h?.close();
  });

  it("renders /docs from the cloud's own assets, with the operations of /openapi.json and no page error", async () => {
    const page = await browser.newPage();
    const errors: string[] = [];
    const foreign: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("request", (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith("data:")) foreign.push(r.url());
    });
    await page.goto(`${base}/docs`);
    await page.locator(".opblock").first().waitFor();
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<string, object>;
      webhooks: Record<string, object>;
    };
    // Each path and webhook of the document appears among the rendered operations (deprecated ones too).
    const shown = await page
      .locator(".opblock-summary-path, .opblock-summary-path__deprecated")
      .allTextContents();
    const shownPaths = new Set(shown.map((p) => p.replace(/\u200b/g, "").trim()));
    expect(shownPaths).toEqual(new Set([...Object.keys(doc.paths), ...Object.keys(doc.webhooks)]));
    expect(await page.locator(".opblock-summary-path", { hasText: "/oauth2/token" }).count()).toBe(1);
    expect(errors).toEqual([]);
    expect(foreign).toEqual([]);
    await page.close();
  });
});
