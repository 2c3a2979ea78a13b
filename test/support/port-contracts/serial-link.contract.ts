import type { Duplex } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SerialLink } from "../../../gateway/ports.ts";
import { closeLink } from "../../../gateway/serial/close-link.ts";
import { type Connector, type LinkEndpoint, writeTo } from "../../../hardware-sim/links.ts";
import { Signal } from "../signal.ts";

/**
 * One way of reaching a device: the connector that plugs the device's cable in and pulls it, and how the
 * gateway opens the host end (the SerialLinkFactory under test).
 */
export type SerialLinkRig = {
  connector: Connector;
  open(): Promise<SerialLink>;
  close?(): Promise<void>;
};

/** Bytes read from one or more streams, and a way to wait for more. */
class Received {
  private chunks: Buffer[] = [];
  private readonly more = new Signal();

  constructor(stream?: Duplex) {
    if (stream) this.from(stream);
  }

  from(stream: Duplex): void {
    stream.on("data", (c: Buffer) => {
      this.chunks.push(c);
      this.more.notify();
    });
  }

  /** Everything received, once at least `n` bytes are there. */
  async atLeast(n: number): Promise<Buffer> {
    await this.more.until(() => this.chunks.reduce((s, c) => s + c.length, 0) >= n);
    return Buffer.concat(this.chunks);
  }
}

/** The device at the far end: records what the host sent over whichever cable, and can answer. */
class TestDevice implements LinkEndpoint {
  private link: Duplex | null = null;
  readonly received = new Received();
  private readonly plugged = new Signal();

  attach(link: Duplex): void {
    link.on("error", () => {});
    this.link = link;
    this.received.from(link);
    this.plugged.notify();
  }

  detach(): void {
    this.link = null;
  }

  /** Resolves once a host's cable reaches the device (at once in memory and over a pty; on accept over TCP). */
  attached(): Promise<void> {
    return this.plugged.until(() => this.link !== null);
  }

  send(bytes: Uint8Array): void {
    writeTo(this.link, bytes);
  }
}

const closed = (link: SerialLink) =>
  link.closed ? Promise.resolve() : new Promise<void>((r) => link.once("close", () => r()));

/** Every byte value, so nothing on the way may treat a byte as a control character (XON, CR, NUL). */
const ALL_BYTES = Buffer.from(Uint8Array.from({ length: 256 }, (_, i) => i));

/**
 * The serial link port's contract (STYLE rule 7): what the lock-bus client and the readers rely on, run
 * against every way the gateway reaches a device. A link is a byte-transparent Duplex; single use; closed
 * from either end; and the path opens again once the device is there.
 */
export function serialLinkContract(
  name: string,
  makeRig: () => SerialLinkRig | Promise<SerialLinkRig>,
): void {
  describe(`serial link contract: ${name}`, () => {
    let rig: SerialLinkRig;
    let device: TestDevice;
    const opened: SerialLink[] = [];
    const open = async () => {
      const link = await rig.open();
      link.on("error", () => {});
      opened.push(link);
      return link;
    };

    beforeEach(async () => {
      rig = await makeRig();
      device = new TestDevice();
      await rig.connector.connect(device);
    });

    afterEach(async () => {
      for (const l of opened.splice(0)) await closeLink(l);
      await rig.connector.disconnect();
      await rig.close?.();
    });

    it("carries every byte value both ways, in order, across several writes", async () => {
      const link = await open();
      const host = new Received(link);
      await device.attached();
      link.write(ALL_BYTES.subarray(0, 100));
      link.write(ALL_BYTES.subarray(100));
      expect(await device.received.atLeast(256)).toEqual(ALL_BYTES);
      const reversed = Buffer.from(ALL_BYTES).reverse();
      device.send(reversed);
      expect(await host.atLeast(256)).toEqual(reversed);
    });

    it("delivers a write larger than any buffer whole", async () => {
      const link = await open();
      await device.attached();
      const big = Buffer.alloc(16 * 1024);
      for (let i = 0; i < big.length; i++) big[i] = (i * 7) % 256;
      link.write(big);
      expect(await device.received.atLeast(big.length)).toEqual(big);
    });

    // The gateway always reads its links; a serialport notices a vanished device only while reading.
    it("closes the host's link (while it reads) when the device's cable is pulled; closeLink still resolves", async () => {
      const link = await open();
      link.resume();
      await device.attached();
      const gone = closed(link);
      await rig.connector.disconnect();
      await gone;
      await closeLink(link);
    });

    it("refuses to open while the device is unplugged, and opens a fresh link once it is back", async () => {
      const first = await open();
      first.resume();
      await device.attached();
      const gone = closed(first);
      await rig.connector.disconnect();
      await gone;
      await expect(rig.open()).rejects.toThrow();

      const again = new TestDevice();
      await rig.connector.connect(again);
      const second = await open();
      second.write(Buffer.from("back"));
      expect((await again.received.atLeast(4)).toString()).toBe("back");
    });

    it("can be opened again at once after the host closed it", async () => {
      await closeLink(await open());
      const second = await open();
      second.write(Buffer.from("hello"));
      expect((await device.received.atLeast(5)).toString()).toBe("hello");
    });
  });
}
