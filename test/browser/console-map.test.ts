import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCloudConfig } from "../../cloud/config.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";

/** A 1×1 PNG: what the local tile server answers for any tile. */
const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==",
  "base64",
);

/** The locations the list links to, by name: the map's markers must link to the same pages. */
async function listedLocations(page: Page): Promise<Map<string, string | null>> {
  const links = page.getByRole("table").getByRole("link");
  await links.first().waitFor();
  const out = new Map<string, string | null>();
  for (const link of await links.all())
    out.set((await link.textContent()) ?? "", await link.getAttribute("href"));
  return out;
}

describe("the overview's map with CONSOLE_MAP_TILES on a local tile server", () => {
  let site: ConsoleSite;
  let tiles: Server;
  let serving = true;
  const asked: string[] = [];
  let template: string;

  beforeAll(async () => {
    tiles = createServer((req, res) => {
      asked.push(req.url ?? "");
      if (!serving) return res.writeHead(503, { "cache-control": "no-store" }).end();
      res.writeHead(200, { "content-type": "image/png", "cache-control": "no-store" }).end(PNG);
    });
    await new Promise<void>((r) => tiles.listen(0, "127.0.0.1", r));
    template = `http://127.0.0.1:${(tiles.address() as AddressInfo).port}/{z}/{x}/{y}.png`;
    // Read as the cloud reads its environment, so the variable's own check applies too.
    const cfg = loadCloudConfig({ CONSOLE_MAP_TILES: template });
    site = await startConsoleSite({ console: { mapTiles: cfg.CONSOLE_MAP_TILES } });
  });
  afterAll(async () => {
    await site?.close();
    await new Promise((r) => tiles?.close(r));
  });

  it("draws the tiles and a marker per location linking to its page, above the list", async () => {
    const page = await site.signedIn("operator");
    const map = page.getByRole("figure", { name: "Map of the locations" });
    await map.waitFor();
    const listed = await listedLocations(page);
    expect(listed.size).toBe(3);
    for (const [name, href] of listed)
      expect(await map.getByRole("link", { name: `${name} on the map` }).getAttribute("href")).toBe(href);
    await expect.poll(() => asked.filter((u) => /^\/\d+\/\d+\/\d+\.png$/.test(u)).length).toBeGreaterThan(0);
    expect(await page.getByText("Map tiles unavailable").count()).toBe(0);
    // The map comes before the list.
    const [mapTop, tableTop] = await Promise.all([map.boundingBox(), page.getByRole("table").boundingBox()]);
    expect((mapTop?.y ?? 0) < (tableTop?.y ?? 0)).toBe(true);

    // Close locations' markers overlap at this zoom: the keyboard reaches each of them anyway.
    const [first] = listed;
    await map.getByRole("link", { name: `${first?.[0]} on the map` }).focus();
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: first?.[0] }).waitFor();
    await page.close();
  });

  it("lets images load from the tile server's origin, and nothing else from elsewhere", async () => {
    const res = await fetch(`${site.base}/console/`);
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain(`img-src 'self' data: ${new URL(template.replace(/\{.\}/g, "0")).origin}`);
    expect(csp).toContain("connect-src 'self'");
  });

  it("leaves the list alone, with a note, when the tiles fail to load", async () => {
    serving = false;
    try {
      const page = await site.signedIn("operator", "/console/", { width: 390, height: 844 });
      await page.getByText("Map tiles unavailable").waitFor();
      expect(await page.getByRole("figure", { name: "Map of the locations" }).count()).toBe(0);
      expect((await listedLocations(page)).size).toBe(3);
      await page.close();
    } finally {
      serving = true;
    }
  });
});

describe("the overview without CONSOLE_MAP_TILES", () => {
  let site: ConsoleSite;
  beforeAll(async () => {
    site = await startConsoleSite();
  });
  afterAll(() => site?.close());

  it("shows the list alone with a note, and the page asks nothing of any other site", async () => {
    const page = await site.browser.newPage();
    const elsewhere: string[] = [];
    page.on("request", (req) => {
      if (new URL(req.url()).origin !== site.base) elsewhere.push(req.url());
    });
    await page.goto(`${site.base}/console/`);
    await page.getByLabel("Email").fill("viewer@a.example");
    await page.getByLabel("Password").fill("a console password");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Map tiles unavailable").waitFor();
    expect((await listedLocations(page)).size).toBe(3);
    expect(await page.getByRole("figure").count()).toBe(0);
    expect(await page.locator("img").count()).toBe(0);
    expect(elsewhere).toEqual([]);
    const csp = (await fetch(`${site.base}/console/`)).headers.get("content-security-policy") ?? "";
    expect(csp).toContain("img-src 'self' data:;");
    await page.close();
  });
});
