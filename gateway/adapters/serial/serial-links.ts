import { openSerialPort } from "../../../shared/node/serial-port.ts";
import type { SerialLinkFactory } from "../../ports.ts";
import { openTcpLink } from "./serial-tcp.ts";

/**
 * The production SerialLinkFactory (STYLE rule 4): a device path through serialport (with the read of
 * shared/node/serial-port.ts that notices a hung-up device), `tcp://host:port` through a socket. Nothing above
 * the port knows which. Tests and the demo inject a factory of their own
 * (the simulator's in-memory links) instead of this one.
 */
export function createSerialLinkFactory(): SerialLinkFactory {
  return (path, baudRate) => (path.startsWith("tcp://") ? openTcpLink(path) : openSerialPort(path, baudRate));
}
