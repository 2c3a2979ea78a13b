import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import { DEMO_MANIFEST, DemoConfigError, demoSettings } from "../../demo/demo.ts";
import { declareDemoStaff, staffBannerLines } from "../../demo/demo-staff.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

describe("the demo's console staff", () => {
  let store: TestDb;
  beforeEach(async () => {
    store = await openTestDb();
  });
  afterEach(() => store.drop());

  it("are an operator and a viewer of the demo operator, with DEMO_CONSOLE_PASSWORD's password", async () => {
    const manifest = loadManifest(DEMO_MANIFEST);
    const settings = demoSettings({ DEMO_CONSOLE_PASSWORD: "console password 1" }, manifest);
    expect(settings.consolePassword).toBe("console password 1");
    declareDemoStaff(manifest);
    declareDemoStaff(manifest);
    const clock = new FakeClock();
    await applyManifest(store.db, manifest, clock, settings.env);
    const staff = createStaffService({ db: store.db, clock });
    const listed = await staff.list();
    expect(listed.map((s) => [s.email, s.role, s.operatorId])).toEqual([
      ["operator@demo.example", "operator", manifest.operators[0]?.id],
      ["viewer@demo.example", "viewer", manifest.operators[0]?.id],
    ]);
    expect(await staff.authenticate("operator@demo.example", "console password 1")).not.toBeNull();
    expect(await staff.authenticate("viewer@demo.example", "console password 1")).not.toBeNull();
  });

  it("have a default password the banner prints with both accounts and the console's address", () => {
    const settings = demoSettings({}, loadManifest(DEMO_MANIFEST));
    expect(settings.consolePassword).toBe("demo-console-password");
    const banner = staffBannerLines("http://127.0.0.1:8080", settings.consolePassword).join("\n");
    expect(banner).toContain("Operator console  http://127.0.0.1:8080/console/");
    expect(banner).toContain("operator@demo.example (operator) or viewer@demo.example (viewer)");
    expect(banner).toContain("password demo-console-password (DEMO_CONSOLE_PASSWORD)");
  });

  it("refuses a DEMO_CONSOLE_PASSWORD too short", () => {
    expect(() => demoSettings({ DEMO_CONSOLE_PASSWORD: "short" }, loadManifest(DEMO_MANIFEST))).toThrow(
      new DemoConfigError("DEMO_CONSOLE_PASSWORD: must be at least 10 characters"),
    );
  });
});
