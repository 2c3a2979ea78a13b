import type { Logger } from "pino";
import { maskCardId } from "../../shared/domain/card-id.ts";
import type { GatewayConfig } from "../config.ts";
import type { Clock, DeviceDirectory, Outbox, SerialLinkFactory } from "../ports.ts";
import { ReaderPort } from "../rfid/reader.ts";

export type CardReader = { cfg: GatewayConfig["readers"][number]; port: ReaderPort };

/**
 * The RFID readers of the config: each card read goes to `onTap` (with the device the reader serves), and a
 * reader lost or back goes up as a hardware event through the durable outbox.
 */
export function createCardReaders(
  readers: GatewayConfig["readers"],
  deps: {
    openLink: SerialLinkFactory;
    clock: Clock;
    log: Logger;
    outbox: Pick<Outbox, "append">;
    registry: Pick<DeviceDirectory, "byAliasName">;
    onTap(reader: string, alias: string, card: string): void;
  },
): CardReader[] {
  const { openLink, clock, log } = deps;
  return readers.map((r) => {
    const port = new ReaderPort(r.id, r.path, { baudRate: r.baud_rate, openLink, clock, log });
    port.on("tap", (card) => {
      log.debug({ reader: r.id, card: maskCardId(card) }, "card tapped");
      deps.onTap(r.id, r.device_alias, card);
    });
    const event = (event: "reader_lost" | "reader_back") =>
      deps.outbox.append({
        type: "hardware_event",
        device_id: deps.registry.byAliasName(r.device_alias)?.device_id ?? null,
        source: r.id,
        event,
        detail: "",
      });
    port.on("lost", () => event("reader_lost"));
    port.on("back", () => event("reader_back"));
    return { cfg: r, port };
  });
}
