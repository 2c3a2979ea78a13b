import net from "node:net";
import { SerialPort } from "serialport";
import type { SerialLink, SerialLinkFactory } from "../ports.ts";

/**
 * Opens a serial link named by a path (STYLE rule 4): a device path through serialport, `tcp://host:port`
 * through a socket (a serial server, or the standalone simulator), or `sim://name` from links the test
 * harness injects. Nothing above this knows which.
 */
export function createSerialLinkFactory(
  injected: Map<string, () => SerialLink> = new Map(),
): SerialLinkFactory {
  return async (path, baudRate) => {
    if (path.startsWith("sim://")) {
      const make = injected.get(path);
      if (!make) throw new Error(`no simulated link named ${path}`);
      return make();
    }
    if (path.startsWith("tcp://")) {
      const u = new URL(path);
      const socket = net.createConnection({ host: u.hostname, port: Number(u.port) });
      socket.setNoDelay(true);
      await new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("error", reject);
      });
      return socket;
    }
    const port = new SerialPort({ path, baudRate, autoOpen: false });
    await new Promise<void>((resolve, reject) => port.open((err) => (err ? reject(err) : resolve())));
    return port;
  };
}
