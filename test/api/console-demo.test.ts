import { afterEach, describe, expect, it } from "vitest";
import type { DemoHardware } from "../../cloud/console/demo-hardware.ts";
import type { DemoAction, DemoLocation } from "../../shared/api/console-demo.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { consoleRequests, consoleSignIn, createConsoleStaff } from "../support/console-api.ts";
import { OP_A, OP_B } from "../support/fixture-site.ts";

/** A simulated location of `operator` with one door that has a reader. */
const site = (id: string, operator: string, code: string): DemoLocation => ({
  id,
  operator_id: operator,
  code,
  label: `${code} house`,
  devices: [
    {
      alias: "door",
      type: "BIKE_HOUSE_DOOR",
      gateway_id: `gw-${code}`,
      simulated: true,
      latch: "locked",
      door_open: false,
      tamper: false,
      reader: true,
    },
  ],
  cards: [{ index: 0, label: "Unknown card", card: "****ffee" }],
});

/** Stands in for the demo's simulator: what the cloud asked it to play, and a refusal for a "broken" door. */
function fakeHardware() {
  const played: DemoAction[] = [];
  const hardware: DemoHardware = {
    locations: () => [site("loc-a", OP_A, "A-H"), site("loc-b", OP_B, "B-H")],
    act: (a) => {
      if (a.device === "broken") return Promise.resolve({ refused: 'A-H has no device "broken"' });
      played.push(a);
      return Promise.resolve({ done: `${a.location_id} ${a.device}: ${a.action}` });
    },
  };
  return { hardware, played };
}

let h: CloudHarness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

type Session = { cookie: string; csrf: string; demoPanel: boolean };

async function signedIn(role: StaffRole): Promise<Session> {
  const harness = h as CloudHarness;
  const email = `${role}@example.com`;
  await createConsoleStaff(harness, email, role, OP_A);
  const { cookie, csrf, body } = await consoleSignIn(harness, email);
  return { cookie, csrf, demoPanel: body.demo_panel };
}

const { get, post } = consoleRequests(() => h as CloudHarness);
const getPanel = (s: Session) => get(s, "/console/api/demo");
const act = (s: Session, payload: unknown) => post(s, "/console/api/demo/actions", payload);

const TAP = { location_id: "loc-a", device: "door", action: "tap", card: 0 };

describe("the demo hardware panel's routes", () => {
  it("are not served without the demo's hardware: 404, and the session says there is no panel", async () => {
    h = await startCloudHarness();
    const operator = await signedIn("operator");
    expect(operator.demoPanel).toBe(false);
    const read = await getPanel(operator);
    expect(read.statusCode).toBe(404);
    expect(read.json()).toMatchObject({ error_code: "ERRORS.NOT_FOUND", status_code: 404 });
    expect((await act(operator, TAP)).statusCode).toBe(404);
  });

  it("shows a viewer its operator's simulated sites, and refuses its act with 403, playing nothing", async () => {
    const fake = fakeHardware();
    h = await startCloudHarness({ console: { demoHardware: fake.hardware } });
    const viewer = await signedIn("viewer");
    expect(viewer.demoPanel).toBe(true);
    const read = await getPanel(viewer);
    expect(read.statusCode).toBe(200);
    expect(read.json().locations.map((l: DemoLocation) => l.code)).toEqual(["A-H"]);

    const refused = await act(viewer, TAP);
    expect(refused.statusCode).toBe(403);
    expect(refused.json()).toMatchObject({ error_code: "ERRORS.FORBIDDEN", status_code: 403 });
    expect(fake.played).toEqual([]);
  });

  it("plays an operator's act and answers what happened; another operator's site is 404", async () => {
    const fake = fakeHardware();
    h = await startCloudHarness({ console: { demoHardware: fake.hardware } });
    const operator = await signedIn("operator");
    const done = await act(operator, TAP);
    expect(done.statusCode).toBe(200);
    expect(done.json()).toEqual({ message: "loc-a door: tap" });
    const turn = { location_id: "loc-a", device: "door", action: "turn", latch: "unlocked" };
    expect((await act(operator, turn)).statusCode).toBe(200);
    expect(fake.played).toEqual([TAP, turn]);

    const other = await act(operator, { ...TAP, location_id: "loc-b" });
    expect(other.statusCode).toBe(404);
    expect(fake.played).toHaveLength(2);
  });

  it("answers a bad act or one the simulator cannot play with the error body, playing nothing", async () => {
    const fake = fakeHardware();
    h = await startCloudHarness({ console: { demoHardware: fake.hardware } });
    const operator = await signedIn("operator");
    for (const bad of [
      { ...TAP, action: "explode" },
      { location_id: "loc-a", device: "door", action: "turn", latch: "ajar" },
      { location_id: "loc-a", device: "door", action: "tap" },
    ]) {
      const res = await act(operator, bad);
      expect(res.statusCode, JSON.stringify(bad)).toBe(400);
      expect(res.json()).toMatchObject({ status_code: 400 });
    }
    const refused = await act(operator, { ...TAP, device: "broken" });
    expect(refused.statusCode).toBe(400);
    expect(refused.json()).toMatchObject({
      error_code: "ERRORS.BAD_REQUEST",
      error_message: 'A-H has no device "broken"',
    });
    const noToken = await (h as CloudHarness).app.inject({
      method: "POST",
      url: "/console/api/demo/actions",
      cookies: { console_session: operator.cookie },
      payload: TAP,
    });
    expect(noToken.statusCode).toBe(403);
    expect(fake.played).toEqual([]);
  });
});
