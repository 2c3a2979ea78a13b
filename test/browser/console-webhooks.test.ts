import { randomBytes } from "node:crypto";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { recordSiteEvent } from "../../cloud/webhooks/site-events.ts";
import { startWebhookDelivery, type WebhookDelivery } from "../../cloud/webhooks/webhook-delivery.ts";
import { type ConsoleSite, startConsoleSite } from "../support/console-site.ts";
import { OP_A } from "../support/fixture-site.ts";
import { accessibilityViolations, fitsWidth } from "../support/page-accessibility.ts";
import { WebhookReceiver } from "../support/webhook-receiver.ts";

const EP = "e1e1e1e1-0000-4000-8000-0000000000c1";
const HOSTILE = `<img src=x onerror=alert(1)>`;
const PHONE = { width: 390, height: 844 };

// An operator reads an endpoint's delivery log, replays a delivery and sends a test event; the receiver gets them.
describe("the console's webhooks", () => {
  let site: ConsoleSite;
  let worker: WebhookDelivery;
  let receiver: WebhookReceiver;

  /** Lets the worker send what is due a second later. */
  async function send() {
    site.h.clock.advance(1_000);
    await worker.tick();
  }

  beforeAll(async () => {
    site = await startConsoleSite();
    receiver = await new WebhookReceiver(() => site.h.clock.now()).start();
    worker = startWebhookDelivery({ db: site.h.db, clock: site.h.clock, log: pino({ level: "silent" }) });
    await applyManifest(
      site.h.db,
      SiteManifest.parse({
        version: 1,
        operators: [
          {
            id: OP_A,
            name: "Operator A",
            webhooks: [
              {
                id: EP,
                url: `${receiver.url}/${HOSTILE}`,
                types: ["alarm"],
                delivery: "direct",
                allow_private: true,
                secret: `whsec_${randomBytes(32).toString("base64")}`,
              },
            ],
          },
        ],
      }),
      site.h.clock,
      {},
    );
    // One alarm: refused once (500), then delivered a minute later.
    receiver.answer = () => 500;
    await recordSiteEvent(site.h.db, { operatorId: OP_A, type: "alarm", data: {}, at: site.h.clock.now() });
    await send();
    receiver.answer = () => 200;
    site.h.clock.advance(60_000);
    await send();
  });
  afterAll(async () => {
    await worker?.stop();
    await receiver?.stop();
    await site?.close();
  });

  it("shows the endpoints, a delivery log with every attempt, and replays a delivery", async () => {
    const page = await site.signedIn("operator", "/console/webhooks");
    const link = page.getByRole("link", { name: /onerror=alert\(1\)/ });
    await link.waitFor();
    expect(await page.locator("main img").count()).toBe(0);
    await link.click();
    expect(new URL(page.url()).pathname).toBe(`/console/webhooks/${EP}`);
    const delivery = page.getByTestId("delivery").filter({ hasText: "alarm" });
    await delivery.getByRole("cell", { name: "HTTP 500" }).waitFor();
    await delivery.getByRole("cell", { name: "HTTP 200" }).waitFor();
    expect(await page.getByTestId("endpoint-url").textContent()).toContain(
      HOSTILE.slice(1, -1).split(" ")[0],
    );
    expect(await page.locator("main img").count()).toBe(0);

    const before = receiver.delivered.length;
    await delivery.getByRole("button", { name: /^Replay/ }).click();
    await page
      .getByRole("dialog", { name: "Replay delivery" })
      .getByRole("button", { name: "Confirm" })
      .click();
    await expect.poll(() => delivery.getByTestId("delivery-status").textContent()).toBe("pending");
    await send();
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => delivery.getByTestId("delivery-status").textContent()).toBe("delivered");
    expect(receiver.delivered.length).toBe(before + 1);
    // The same message id again: the receiver can tell it already has it.
    const ids = receiver.delivered.map((r) => r.headers["webhook-id"]);
    expect(ids.at(-1)).toBe(ids.at(-2));
    await page.close();
  });

  it("sends a test event and shows it in the log once the worker delivered it", async () => {
    const page = await site.signedIn("operator", `/console/webhooks/${EP}`);
    await page.getByRole("button", { name: "Send test event" }).click();
    await page
      .getByRole("dialog", { name: "Send test event" })
      .getByRole("button", { name: "Confirm" })
      .click();
    const test = page.getByTestId("delivery").filter({ has: page.getByRole("heading", { name: /^test ·/ }) });
    await expect.poll(() => test.getByTestId("delivery-status").textContent()).toBe("pending");
    await send();
    expect(JSON.parse(receiver.delivered.at(-1)?.body ?? "{}")).toMatchObject({ type: "test" });
    await page.getByRole("button", { name: "Refresh" }).click();
    await expect.poll(() => test.getByTestId("delivery-status").textContent()).toBe("delivered");
    await test.getByRole("cell", { name: "HTTP 200" }).waitFor();
    await page.close();
  });

  it("shows a viewer the log with no Replay or Send test event control", async () => {
    const page = await site.signedIn("viewer", `/console/webhooks/${EP}`);
    await page.getByTestId("delivery").first().waitFor();
    await page.getByRole("button", { name: "Refresh" }).waitFor();
    expect(await page.getByRole("button", { name: "Send test event" }).count()).toBe(0);
    expect(await page.getByRole("button", { name: /^Replay/ }).count()).toBe(0);
    await page.close();
  });

  it("fits a phone 390 px wide, with no accessibility violation axe finds", async () => {
    for (const path of ["/console/webhooks", `/console/webhooks/${EP}`]) {
      const page = await site.signedIn("operator", path, PHONE);
      await page.locator("table").first().waitFor();
      expect(await fitsWidth(page), path).toBe(true);
      expect(await accessibilityViolations(page), path).toEqual([]);
      await page.close();
    }
  });
});
