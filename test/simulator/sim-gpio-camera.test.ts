import { describe, expect, it } from "vitest";
import { SimCamera } from "../../hardware-sim/camera.ts";
import { SimDoor } from "../../hardware-sim/door.ts";
import { SimGpioBank } from "../../hardware-sim/gpio-lines.ts";

describe("simulated GPIO bank", () => {
  it("reports only real changes to watchers and stops after unsubscribe", () => {
    const bank = new SimGpioBank(["power_relay:reader-1"]);
    const line = bank.line("power_relay:reader-1");
    const seen: boolean[] = [];
    const off = line.watch((v) => seen.push(v));
    line.write(true);
    line.write(true);
    line.write(false);
    off();
    line.write(true);
    expect(seen).toEqual([true, false]);
    expect(line.read()).toBe(true);
  });

  it("throws for an unknown line and for the gateway writing an input", () => {
    const bank = new SimGpioBank({ tamper: false });
    expect(() => bank.line("door_strike:nowhere")).toThrow(/unknown GPIO line/);
    expect(() => bank.line("tamper").write(true)).toThrow(/input/);
    bank.simLine("tamper").set(true); // the case is opened
    expect(bank.line("tamper").read()).toBe(true);
  });

  it("drops the gateway's watches on close but keeps the hardware's", () => {
    const bank = new SimGpioBank();
    const door = new SimDoor(bank, "east");
    const gatewaySeen: boolean[] = [];
    bank.line("door_strike:east").watch((v) => gatewaySeen.push(v));
    bank.close();
    bank.line("door_strike:east").write(true);
    expect(gatewaySeen).toEqual([]);
    expect(door.strikePulses).toBe(1);
  });
});

describe("simulated door", () => {
  it("opens only while the strike is released and reports closed on its contact line", () => {
    const bank = new SimGpioBank();
    const door = new SimDoor(bank, "north");
    const contact = bank.line("door_contact:north");
    const changes: boolean[] = [];
    contact.watch((closed) => changes.push(closed));

    expect(door.push()).toBe(false);
    expect(contact.read()).toBe(true);

    bank.line("door_strike:north").write(true);
    expect(door.push()).toBe(true);
    bank.line("door_strike:north").write(false);
    door.close();
    expect(changes).toEqual([false, true]);
    expect(door.strikePulses).toBe(1);

    door.force();
    expect(door.isOpen).toBe(true);
  });
});

describe("simulated camera", () => {
  it("returns a small JPEG, different each time", async () => {
    const cam = new SimCamera();
    const a = await cam.capture();
    const b = await cam.capture();
    expect(a.mime).toBe("image/jpeg");
    expect([...a.bytes.subarray(0, 3)]).toEqual([0xff, 0xd8, 0xff]);
    expect([...a.bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(Buffer.from(a.bytes).equals(Buffer.from(b.bytes))).toBe(false);
    expect(cam.captures).toBe(2);
  });

  it("takes full-size frames on request (filler segments before EOI) and keeps the last photo", async () => {
    const cam = new SimCamera();
    cam.setFrameSize(200_000);
    const big = await cam.capture();
    expect(big.bytes.length).toBeGreaterThanOrEqual(200_000);
    expect(big.bytes.length).toBeLessThan(200_100);
    expect([...big.bytes.subarray(0, 2)]).toEqual([0xff, 0xd8]);
    expect([...big.bytes.subarray(-2)]).toEqual([0xff, 0xd9]);
    expect(cam.last).toBe(big);
    cam.setFrameSize(0);
    expect((await cam.capture()).bytes.length).toBeLessThan(100);
  });

  it("fails on demand, once or until repaired", async () => {
    const cam = new SimCamera();
    cam.failNext();
    await expect(cam.capture()).rejects.toThrow(/capture failed/);
    await expect(cam.capture()).resolves.toMatchObject({ mime: "image/jpeg" });
    cam.setBroken();
    await expect(cam.capture()).rejects.toThrow(/not responding/);
    cam.setBroken(null);
    await expect(cam.capture()).resolves.toMatchObject({ mime: "image/jpeg" });
  });
});
