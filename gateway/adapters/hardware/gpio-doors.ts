import { EventEmitter } from "node:events";
import { gpioLineName } from "../../../shared/protocol/gpio-lines.ts";
import type { Clock, GpioBank, GpioLine, MappedDevice, Reading, TimerHandle } from "../../ports.ts";

type Door = {
  device: MappedDevice;
  strike: GpioLine;
  contact: GpioLine | null;
  relockTimer: TimerHandle | null;
  /** Opened since the last release: closing it again means someone went through. */
  openedSinceRelease: boolean;
  unwatch: (() => void) | null;
};

export type DoorEvents = {
  /** The door contact changed (only for doors with a contact line). */
  door: [MappedDevice, boolean];
  /** The strike was dropped: the lock engaged again, because the door closed or the window ran out. */
  relocked: [MappedDevice, "closed" | "timeout"];
};

/**
 * Doors wired to GPIO (docs/hardware-protocol.md, "GPIO lines"): `door_strike:<alias>` releases the lock
 * while active, `door_contact:<alias>` (when wired) reads closed while active. A released door locks
 * again as soon as it closes after being opened, or when its release window runs out (spec rule 5).
 */
export class GpioDoors extends EventEmitter<DoorEvents> {
  private readonly doors = new Map<string, Door>();

  constructor(
    private readonly gpio: GpioBank,
    private readonly clock: Clock,
    private readonly releaseS: number,
  ) {
    super();
  }

  /** Takes the GPIO-wired doors of a (new) device map; doors that left it are let go. */
  track(devices: MappedDevice[]): void {
    const wanted = new Set<string>();
    for (const device of devices) {
      if (device.bus || (device.type !== "BIKE_HOUSE_DOOR" && device.type !== "DOOR")) continue;
      const strike = this.lineOrNull(gpioLineName("door_strike", device.alias));
      if (!strike) continue;
      wanted.add(device.device_id);
      if (this.doors.has(device.device_id)) continue;
      const contact = this.lineOrNull(gpioLineName("door_contact", device.alias));
      const door: Door = {
        device,
        strike,
        contact,
        relockTimer: null,
        openedSinceRelease: false,
        unwatch: null,
      };
      door.unwatch = contact?.watch((closed) => this.onContact(door, !closed)) ?? null;
      this.doors.set(device.device_id, door);
      // Released by no one here: a daemon killed inside its release window leaves the line driven, and
      // nothing else would ever engage it. The release runs on as if just made: one window, or until the
      // door closes again if it stands open.
      if (strike.read()) {
        door.openedSinceRelease = contact !== null && !contact.read();
        door.relockTimer = this.clock.setTimer(this.releaseS * 1000, () => this.relock(door, "timeout"));
      }
    }
    for (const [id, door] of this.doors) if (!wanted.has(id)) this.drop(door);
  }

  has(deviceId: string): boolean {
    return this.doors.has(deviceId);
  }

  /** The lock and door as the lines say now. */
  read(deviceId: string): Reading | null {
    const door = this.doors.get(deviceId);
    if (!door) return null;
    return {
      latch: door.strike.read() ? "unlocked" : "locked",
      ...(door.contact ? { door_open: !door.contact.read() } : {}),
    };
  }

  /** Releases the strike for the release window. Returns false for a door this gateway does not drive. */
  release(deviceId: string): boolean {
    const door = this.doors.get(deviceId);
    if (!door) return false;
    if (door.relockTimer) this.clock.clearTimer(door.relockTimer);
    door.openedSinceRelease = false;
    door.strike.write(true);
    door.relockTimer = this.clock.setTimer(this.releaseS * 1000, () => this.relock(door, "timeout"));
    return true;
  }

  /** Lets go of every door, engaging each strike still released: a stopped daemon leaves no door open. */
  close(): void {
    for (const door of this.doors.values()) {
      this.relock(door, "timeout");
      this.drop(door);
    }
  }

  private onContact(door: Door, open: boolean): void {
    this.emit("door", door.device, open);
    if (open) door.openedSinceRelease = door.strike.read();
    else if (door.openedSinceRelease && door.strike.read()) this.relock(door, "closed");
  }

  private relock(door: Door, why: "closed" | "timeout"): void {
    if (door.relockTimer) this.clock.clearTimer(door.relockTimer);
    door.relockTimer = null;
    door.openedSinceRelease = false;
    if (!door.strike.read()) return;
    door.strike.write(false);
    this.emit("relocked", door.device, why);
  }

  private drop(door: Door): void {
    if (door.relockTimer) this.clock.clearTimer(door.relockTimer);
    door.unwatch?.();
    this.doors.delete(door.device.device_id);
  }

  private lineOrNull(name: string): GpioLine | null {
    try {
      return this.gpio.line(name);
    } catch {
      return null;
    }
  }
}
