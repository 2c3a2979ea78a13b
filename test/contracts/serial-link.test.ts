import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createSerialLinkFactory } from "../../gateway/adapters/serial/serial-links.ts";
import { MemoryConnector, PtyConnector, TcpConnector } from "../../hardware-sim/links.ts";
import { serialLinkContract } from "../support/port-contracts/serial-link.contract.ts";

const BAUD = 115_200;

// The simulator's in-memory cable: what tests and the demo hand the gateway as its SerialLinkFactory.
serialLinkContract("in-memory pair (hardware-sim)", () => {
  const connector = new MemoryConnector("sim://contract");
  return { connector, open: () => connector.open() };
});

// A pseudo-terminal pair through socat, opened with the production factory (serialport), as on a GUARD.
serialLinkContract("pseudo-terminal via serialport (production factory)", () => {
  const dir = mkdtempSync(path.join(tmpdir(), "serial-contract-"));
  const connector = new PtyConnector(dir, "bus0", BAUD);
  const openLink = createSerialLinkFactory();
  return {
    connector,
    open: () => openLink(connector.hostPath, BAUD),
    close: () => Promise.resolve(rmSync(dir, { recursive: true, force: true })),
  };
});

// A serial line over TCP (a device server, or the standalone simulator), opened as tcp://host:port.
serialLinkContract("tcp:// (production factory)", () => {
  const connector = new TcpConnector();
  const openLink = createSerialLinkFactory();
  return { connector, open: () => openLink(connector.url, BAUD) };
});
