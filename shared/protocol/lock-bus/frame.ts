import { crc16modbus } from "crc";
import { ETX, FRAME_OVERHEAD, HEADER_LEN, MAX_ADDRESS, MAX_PAYLOAD, MIN_ADDRESS, STX } from "./constants.ts";

/**
 * One frame on the lock bus:
 *   STX | ADDR | SEQ | CMD | LEN | PAYLOAD (LEN bytes) | CRC16 (little endian) | ETX
 * The CRC is CRC-16/MODBUS over ADDR..PAYLOAD.
 */
export type Frame = { addr: number; seq: number; cmd: number; payload: Uint8Array };

export function checksum(bytes: Uint8Array): number {
  return crc16modbus(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
}

export function encodeFrame(f: Frame): Uint8Array {
  if (f.payload.length > MAX_PAYLOAD)
    throw new RangeError(`payload of ${f.payload.length} bytes exceeds ${MAX_PAYLOAD}`);
  // Addresses are 1–247 (docs/hardware-protocol.md); a non-integer (NaN, 1.5) would be silently coerced to a byte.
  if (!Number.isInteger(f.addr) || f.addr < MIN_ADDRESS || f.addr > MAX_ADDRESS) {
    throw new RangeError(`address ${f.addr} out of range`);
  }
  const out = new Uint8Array(FRAME_OVERHEAD + f.payload.length);
  out[0] = STX;
  out[1] = f.addr;
  out[2] = f.seq & 0xff;
  out[3] = f.cmd;
  out[4] = f.payload.length;
  out.set(f.payload, HEADER_LEN);
  const crc = checksum(out.subarray(1, HEADER_LEN + f.payload.length));
  out[HEADER_LEN + f.payload.length] = crc & 0xff;
  out[HEADER_LEN + f.payload.length + 1] = crc >> 8;
  out[out.length - 1] = ETX;
  return out;
}
