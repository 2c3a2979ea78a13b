import { afterEach, describe, expect, it } from "vitest";
import type { Camera, GpioBank, SerialLinkFactory } from "../../gateway/ports.ts";
import { HostProbe } from "../../hardware-sim/host-probe.ts";
import { createSimSite, type SimSite } from "../../hardware-sim/site.ts";

let site: SimSite | null = null;
afterEach(async () => {
  await site?.close();
  site = null;
});

describe("createSimSite", () => {
  it("builds buses from a plain object and hands the gateway their host ends by sim:// path", async () => {
    site = createSimSite({
      moveMs: 0,
      buses: {
        bus0: {
          boards: [
            { address: 1, channels: 8 },
            { address: 2, channels: 2, doors: [1] },
          ],
        },
        bus1: { boards: [{ address: 1, channels: 16, firmware: "4.2" }] },
      },
    });
    const bus0 = new HostProbe(await site.linkFactory("sim://bus0", 115_200));
    const bus1 = new HostProbe(await site.linkFactory("sim://bus1", 115_200));
    expect((await bus0.request({ kind: "ping", addr: 2, seq: 1 })).reply).toMatchObject({
      addr: 2,
      channels: 2,
    });
    expect((await bus1.request({ kind: "ping", addr: 1, seq: 2 })).reply).toMatchObject({
      channels: 16,
      firmware: "4.2",
    });
    // The two buses are separate lines: bus1's board 1 never heard bus0's traffic.
    expect(site.board("bus1", 1).received.map((r) => r.seq)).toEqual([2]);
    expect(site.board("bus0", 2).channel(1).kind).toBe("door");
    expect(site.board("bus0", 1).moveMs).toBe(0);
  });

  it("rejects paths it does not serve", async () => {
    site = createSimSite({ buses: { bus0: { boards: [{ address: 1 }] } } });
    await expect(site.linkFactory("sim://nope")).rejects.toThrow(/ENOENT/);
    await expect(site.linkFactory("/dev/ttyUSB0")).rejects.toThrow(/ENOENT/);
  });

  it("closes the host's bus link when the bus cable is pulled, and serves a new one once replugged", async () => {
    site = createSimSite({ moveMs: 0, buses: { bus0: { boards: [{ address: 1 }] } } });
    const link = await site.linkFactory("sim://bus0");
    const closed = new Promise<void>((res) => link.once("close", () => res()));
    await site.bus("bus0").unplug();
    await closed;
    await site.bus("bus0").plugIn();
    const host = new HostProbe(await site.linkFactory("sim://bus0"));
    expect((await host.request({ kind: "ping", addr: 1, seq: 3 })).reply?.kind).toBe("ping_reply");
  });

  it("refuses a scenario that names a bad key, a duplicate address or a name used twice", () => {
    expect(() => createSimSite({ buses: { bus0: { boards: [{ address: 300 }] } } })).toThrow(/address/);
    expect(() => createSimSite({ buses: { bus0: { boards: [{ address: 1 }, { address: 1 }] } } })).toThrow(
      /unique/,
    );
    expect(() => createSimSite({ buses: { x: { boards: [{ address: 1 }] } }, readers: { x: {} } })).toThrow(
      /both a bus and a reader/,
    );
    expect(() => createSimSite({ bogus: true } as never)).toThrow(/bogus/);
  });

  it("wires doors to door_strike/door_contact lines on the shared GPIO bank", () => {
    site = createSimSite({ doors: ["north"], gpio: { tamper: false } });
    const gateway = site.gpio; // what a test passes to the gateway as its GpioBank
    expect(gateway.line("door_contact:north").read()).toBe(true);
    gateway.line("door_strike:north").write(true);
    expect(site.door("north").push()).toBe(true);
    expect(gateway.line("door_contact:north").read()).toBe(false);
    expect(gateway.line("tamper").read()).toBe(false);
  });

  it("fits the gateway's ports as they are (SerialLinkFactory, GpioBank, Camera)", async () => {
    site = createSimSite({ moveMs: 0, buses: { bus0: { boards: [{ address: 1 }] } }, doors: ["north"] });
    // Type annotations are the check: the sim never imports gateway/, so only structure can make these fit.
    const linkFactory: SerialLinkFactory = site.linkFactory;
    const gpio: GpioBank = site.gpio;
    const camera: Camera = site.camera;
    const host = new HostProbe(await linkFactory("sim://bus0", 115_200));
    expect((await host.request({ kind: "status", addr: 1, seq: 1, channel: 1 })).reply?.kind).toBe(
      "status_reply",
    );
    expect(gpio.line("door_contact:north").read()).toBe(true);
    expect((await camera.capture()).mime).toBe("image/jpeg");
  });
});
