import type { RunningGateway } from "../../gateway/gateway.ts";
import type { AccessDecision } from "../../shared/wire/messages.ts";
import type { Tap } from "./invariants.ts";
import { UNDECIDED_TAP_MS } from "./invariants.ts";
import { DOOR_READER, deviceAlias, deviceId, doorAlias } from "./sim-site.ts";
import type { Decided } from "./tap-invariants.ts";

type Received = { gateway: string; daemon: RunningGateway; reader: string; card: string; at: number };

/**
 * The taps each daemon received and what it decided of each, on virtual time. A daemon decides one
 * locker's taps in turn, so a decision belongs to the oldest tap of its reader and card that daemon has
 * not decided yet; a tap its daemon stopped before deciding stays open (the next daemon recovers it).
 */
export function createTapLog(now: () => number) {
  const open: Received[] = [];
  const closed: Tap[] = [];
  const decided: Decided[] = [];
  const deviceOf = (gateway: string, reader: string) =>
    deviceId(
      reader === DOOR_READER
        ? doorAlias(gateway)
        : deviceAlias(gateway, Number(reader.replace("reader-", ""))),
    );

  return {
    decided,
    /** Follows one daemon's taps and decisions (every daemon started, restarts included). */
    follow(gateway: string, daemon: RunningGateway, told: (d: AccessDecision) => void): void {
      daemon.onTap((reader, card) => open.push({ gateway, daemon, reader, card, at: now() }));
      daemon.onAccess((d) => {
        told(d);
        decided.push({ gateway, decision: d, at: now() });
        const i = open.findIndex((t) => t.daemon === daemon && t.reader === d.reader && t.card === d.card_id);
        const tap = open[i];
        if (!tap) return;
        open.splice(i, 1);
        if (d.action !== "none")
          closed.push({
            device_id: deviceOf(gateway, tap.reader),
            at: tap.at,
            until: now(),
            action: d.action,
          });
      });
    },
    /** Every tap that may have moved a latch: decided ones with their action, undecided ones either way. */
    taps(): Tap[] {
      return [
        ...closed,
        ...open.map((t) => ({
          device_id: deviceOf(t.gateway, t.reader),
          at: t.at,
          until: t.at + UNDECIDED_TAP_MS,
          action: null,
        })),
      ];
    },
  };
}
