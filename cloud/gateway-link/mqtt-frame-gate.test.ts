import { describe, expect, it } from "vitest";
import { varint } from "../../test/support/raw-mqtt.ts";
import { MqttFrameGate } from "./mqtt-frame-gate.ts";

/** A packet of type `type` whose body is `body` bytes long. */
function packet(type: number, body: number): Buffer {
  return Buffer.concat([Buffer.from([type << 4, ...varint(body)]), Buffer.alloc(body, 0x61)]);
}

const LIMITS = { connectBytes: 100, packetBytes: 1000 };
const CONNECT = 1;
const PUBLISH = 3;

describe("the MQTT frame gate", () => {
  it("passes a CONNECT and later packets within their limits, however the bytes are split", () => {
    const stream = Buffer.concat([
      packet(CONNECT, 98),
      packet(PUBLISH, 997),
      packet(12, 0),
      packet(PUBLISH, 200),
    ]);
    for (const size of [1, 2, 3, 7, 64, stream.length]) {
      const gate = new MqttFrameGate(LIMITS);
      for (let i = 0; i < stream.length; i += size) {
        expect(gate.check(stream.subarray(i, i + size)), `chunks of ${size}`).toBeNull();
      }
    }
  });

  it("refuses a CONNECT over its limit from the header alone", () => {
    const gate = new MqttFrameGate(LIMITS);
    // The first two bytes declare 101 bytes in all; no body has arrived.
    expect(gate.check(Buffer.from([CONNECT << 4, 99]))?.message).toBe(
      "CONNECT of 101 bytes exceeds the limit of 100",
    );
    const huge = new MqttFrameGate(LIMITS);
    expect(huge.check(Buffer.from([CONNECT << 4, ...varint(200 * 1024 * 1024)]))?.message).toMatch(
      /^CONNECT of 209715205 bytes exceeds/,
    );
  });

  it("refuses a later packet over the packet limit, even when its header straddles two chunks", () => {
    const gate = new MqttFrameGate(LIMITS);
    expect(gate.check(packet(CONNECT, 10))).toBeNull();
    expect(gate.check(Buffer.from([PUBLISH << 4, 0xe6]))).toBeNull(); // length continues
    expect(gate.check(Buffer.from([0x07]))).toEqual({
      reason: "frame",
      message: "packet of 1001 bytes exceeds the limit of 1000",
    });
  });

  it("refuses a first packet that is not a CONNECT, and a remaining length of more than four bytes", () => {
    expect(new MqttFrameGate(LIMITS).check(packet(PUBLISH, 5))?.message).toBe(
      "the first packet is not a CONNECT",
    );
    const gate = new MqttFrameGate({ connectBytes: 100, packetBytes: 2 ** 30 });
    expect(gate.check(packet(CONNECT, 10))).toBeNull();
    expect(gate.check(Buffer.from([PUBLISH << 4, 0x80, 0x80, 0x80, 0x80]))?.message).toBe(
      "malformed remaining length",
    );
  });

  it("passes PUBLISH with QoS 0 and 1 and refuses QoS 2 (and the reserved 3) from the first byte", () => {
    const gate = new MqttFrameGate(LIMITS);
    expect(gate.check(packet(CONNECT, 10))).toBeNull();
    for (const qos of [0, 1])
      expect(gate.check(packet(PUBLISH, 20).fill((PUBLISH << 4) | (qos << 1), 0, 1))).toBeNull();
    for (const qos of [2, 3]) {
      const g = new MqttFrameGate(LIMITS);
      g.check(packet(CONNECT, 10));
      // Only the type byte has arrived: no length, no body.
      expect(g.check(Buffer.from([(PUBLISH << 4) | (qos << 1)]))).toEqual({
        reason: "qos2",
        message: `PUBLISH with QoS ${qos}: the wire uses QoS 0 and 1`,
      });
    }
    // The same bits in another packet type mean something else: SUBSCRIBE's first byte is 0x82.
    expect(gate.check(Buffer.from([0x82, 0]))).toBeNull();
  });
});
