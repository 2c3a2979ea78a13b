import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBanner, type RunningDemo, startDemo } from "../../demo/demo.ts";

const ALL_GATEWAYS = "gw-cs-lockers,gw-ms-docks,gw-hb-house,gw-pk-house";

describe("the demo's console staff (npm start)", () => {
  let dir: string;
  let demo: RunningDemo;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "demo-staff-"));
    demo = await startDemo({
      env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dir, DEMO_SKIP_GATEWAYS: ALL_GATEWAYS },
      log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
    });
  });
  afterAll(async () => {
    await demo?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  it("signs in the operator and the viewer with the password the banner prints", async () => {
    const banner = demoBanner(demo);
    expect(banner).toContain(`Operator console  ${demo.cloud.baseUrl}/console/`);
    expect(banner).toContain("operator@demo.example (operator) or viewer@demo.example (viewer)");
    expect(banner).toContain("password demo-console-password (DEMO_CONSOLE_PASSWORD)");
    for (const [email, role] of [
      ["operator@demo.example", "operator"],
      ["viewer@demo.example", "viewer"],
    ]) {
      const res = await fetch(`${demo.cloud.baseUrl}/console/api/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "demo-console-password" }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toMatchObject({ email, role, operator_id: demo.manifest.operators[0]?.id });
      expect(res.headers.get("set-cookie")).toMatch(
        /^console_session=[^;]+; Path=\/console; HttpOnly; SameSite=Strict$/,
      );
    }
  });
});
