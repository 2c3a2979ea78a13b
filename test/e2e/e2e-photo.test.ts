import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Command } from "../../shared/api/command.ts";
import { PHOTO_PART_BYTES } from "../../shared/wire/messages.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type Site, startSite } from "../support/site-harness.ts";

/**
 * GUARD take-photo end to end (docs/decisions/photos.md): API → broker → gateway → simulated camera → the
 * gateway's outbox (the photo in parts, with the SUCCESS) → broker → cloud → GET the event's URL.
 */
const GUARD = fx.guard("gw-a1"); // the fixture's gw-a1 has a camera

function settled(site: Site, id: string): Promise<Command> {
  return eventually(async () => {
    const c = Command.parse((await site.api("GET", `/device/v1/commands/${id}`)).json());
    expect(["SUCCESS", "ERROR"]).toContain(c.state.value);
    return c;
  }, 25_000);
}

async function takePhoto(site: Site): Promise<Command> {
  const post = await site.api("POST", `/device/v1/devices/${GUARD}/commands`, { command: "take-photo" });
  expect(post.statusCode, post.body).toBe(200);
  return settled(site, Command.parse(post.json()).id);
}

describe.each(["aedes", "mosquitto"] as const)(
  "GUARD take-photo through the whole system (%s, in-memory serial)",
  (broker) => {
    let site: Site;
    beforeAll(async () => {
      site = await startSite({
        broker,
        serial: "memory",
        // Whatever the fixture says today, this GUARD has a camera.
        manifest: (m) => {
          const gw = m.operators[0]?.locations?.[0]?.gateways?.[0];
          if (gw?.id !== "gw-a1") throw new Error("the fixture's first gateway is no longer gw-a1");
          gw.camera = true;
        },
      });
      // The gateway has its device map (and so knows its camera) once it reports the GUARD healthy.
      await eventually(async () => {
        const d = (await site.api("GET", `/device/v1/devices/${GUARD}`)).json();
        expect(d.heartbeat_v2?.health).toBe("HEALTHY");
      }, 25_000);
    });
    afterAll(() => site.stop());

    for (const [what, frameBytes] of [
      ["a small photo, in one part", 0],
      ["a full-size photo, in parts each under the broker's packet limit", 2 * PHOTO_PART_BYTES + 4_321],
    ] as const) {
      it(`stores ${what} and serves it at the URL of RESPONSE_PHOTO_TAKEN`, async () => {
        site.sim.camera.setFrameSize(frameBytes);
        const done = await takePhoto(site);
        expect(done.state.value, done.state.reason).toBe("SUCCESS");
        const taken = site.sim.camera.last;
        if (!taken) throw new Error("the camera took no photo");
        expect(taken.bytes.length).toBeGreaterThanOrEqual(frameBytes);
        expect(done.state.reason).toBe(`photo taken (${taken.bytes.length} bytes)`);
        const url = done.events.find((e) => e.name === "RESPONSE_PHOTO_TAKEN")?.value;
        expect(url).toBe(`/device/v1/commands/${done.id}/photo`);

        // The parts may still be on their way just after the SUCCESS.
        const photo = await eventually(async () => {
          const res = await site.api("GET", url as string);
          expect(res.statusCode, res.body.slice(0, 200)).toBe(200);
          return res;
        });
        expect(photo.headers["content-type"]).toBe("image/jpeg");
        expect(photo.rawPayload.equals(Buffer.from(taken.bytes))).toBe(true);
        // The gateway's outbox is drained: every part was acknowledged by the cloud.
        await eventually(async () => expect((await site.status()).outbox.pending).toBe(0));
      });
    }

    it("ends in ERROR with the camera's reason when the capture fails, and there is no photo", async () => {
      site.sim.camera.failNext();
      const done = await takePhoto(site);
      expect(done.state.value).toBe("ERROR");
      expect(done.state.reason).toMatch(/camera: capture failed/);
      const res = await site.api("GET", `/device/v1/commands/${done.id}/photo`);
      expect(res.statusCode).toBe(404);
      expect(res.json().error_message).toMatch(/ended in ERROR/);
    });
  },
);
