import { read } from "node:fs";
import { promisify } from "node:util";
import {
  autoDetect,
  type BindingInterface,
  LinuxBinding,
  type LinuxBindingInterface,
  type LinuxOpenOptions,
  type LinuxPortBinding,
} from "@serialport/bindings-cpp";
import { SerialPortStream } from "@serialport/stream";

const readAsync = promisify(read);
const RETRY = new Set(["EAGAIN", "EWOULDBLOCK", "EINTR"]);

/**
 * serialport's Unix read reads again at once, without waiting, when a read returns 0 bytes — and a tty
 * whose other end hung up (a pulled USB adapter, a closed pseudo-terminal) returns 0 bytes forever. The
 * read then spins in the thread pool, its promise chain grows without bound, and the port never closes.
 * A non-blocking tty read with no data fails with EAGAIN; 0 bytes means the device is gone, so this read
 * reports a disconnect instead, which closes the stream (and its owner reopens it with backoff).
 */
async function readUntilHangup(
  port: LinuxPortBinding,
  buffer: Buffer,
  offset: number,
  length: number,
): Promise<{ bytesRead: number; buffer: Buffer }> {
  for (;;) {
    if (!port.isOpen || port.fd === null)
      throw Object.assign(new Error("Port is not open"), { canceled: true });
    try {
      const { bytesRead } = await readAsync(port.fd, buffer, offset, length, null);
      if (bytesRead > 0) return { bytesRead, buffer };
      throw Object.assign(new Error("the serial device hung up"), { disconnect: true });
    } catch (err) {
      if (!RETRY.has((err as NodeJS.ErrnoException).code ?? "")) throw err;
      if (!port.isOpen) throw Object.assign(new Error("Port is not open"), { canceled: true });
      await new Promise<void>((resolve, reject) =>
        port.poller.once("readable", (e) => (e ? reject(e) : resolve())),
      );
    }
  }
}

/** The platform's binding, with the read above on Linux (the only platform a GUARD runs). */
function hangupAwareBinding(): BindingInterface | LinuxBindingInterface {
  if (process.platform !== "linux") return autoDetect();
  return {
    list: () => LinuxBinding.list(),
    async open(options: LinuxOpenOptions): Promise<LinuxPortBinding> {
      const port = await LinuxBinding.open(options);
      port.read = (buffer, offset, length) => readUntilHangup(port, buffer, offset, length);
      return port;
    },
  };
}

const binding = hangupAwareBinding();

/**
 * A serial device path (/dev/ttyUSB0, either side of a pseudo-terminal) through serialport; resolves once
 * it is open. Both ends of a line use it: the gateway for its buses and readers, the simulator for its side
 * of a pseudo-terminal, so neither spins when the other goes away. Close it with close() (then destroy()):
 * destroy() alone leaves the device open and locked.
 */
export async function openSerialPort(path: string, baudRate: number): Promise<SerialPortStream> {
  const port = new SerialPortStream({ binding, path, baudRate, autoOpen: false });
  await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
  return port;
}
