/**
 * A door on GPIO (docs/hardware-protocol.md, "GPIO lines"): the gateway releases `door_strike:<name>`
 * (output, active = released) and watches `door_contact:<name>` (input, active = closed). A person can
 * push the door open only while the strike is released.
 */
import { gpioLineName } from "../shared/protocol/gpio-lines.ts";
import type { SimGpioBank, SimGpioLine } from "./gpio-lines.ts";

export class SimDoor {
  private readonly strike: SimGpioLine;
  private readonly contact: SimGpioLine;
  private pulses = 0;
  private readonly unwatch: () => void;

  constructor(
    bank: SimGpioBank,
    readonly name: string,
  ) {
    this.strike = bank.define(gpioLineName("door_strike", name), false);
    this.contact = bank.define(gpioLineName("door_contact", name), true);
    this.unwatch = this.strike.watch((released) => {
      if (released) this.pulses++;
    });
  }

  get isOpen(): boolean {
    return !this.contact.read();
  }

  get isStrikeReleased(): boolean {
    return this.strike.read();
  }

  /** How many times the gateway has released the strike. */
  get strikePulses(): number {
    return this.pulses;
  }

  /** Someone pushes the door: it opens only while the strike is released. Returns whether it is open. */
  push(): boolean {
    if (this.strike.read()) this.contact.set(false);
    return this.isOpen;
  }

  /** The door swings shut (the strike catches it whatever its state). */
  close(): void {
    this.contact.set(true);
  }

  /** Forced open (break-in, failed strike): the contact opens without a release. */
  force(): void {
    this.contact.set(false);
  }

  dispose(): void {
    this.unwatch();
  }
}
