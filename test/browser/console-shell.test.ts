import type { AddressInfo } from "node:net";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { launchBrowser } from "../support/browser.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";

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
});
