import { SerialPort } from "serialport";
import type { SerialLink } from "../ports.ts";

/** A serial device path (/dev/ttyUSB0, a pseudo-terminal) through serialport; resolves once it is open. */
export async function openSerialPort(path: string, baudRate: number): Promise<SerialLink> {
  const port = new SerialPort({ path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  return port;
}
