import type { LightMyRequestResponse } from "fastify";
import { gpioLineName } from "../../shared/protocol/gpio-lines.ts";
import type { Prng } from "./determinism.ts";
import type { Movement } from "./invariants.ts";
import { CARDS, DOOR_READER, DOOR_WATCH_S, deviceId, doorAlias, HELD_OPEN_S } from "./sim-site.ts";
import type { World } from "./world.ts";

type Api = (method: "GET" | "POST", url: string, payload?: object) => Promise<LightMyRequestResponse>;

/** A door standing open from `from` to `to` (virtual ms; null: open still). */
type Opening = { gateway: string; from: number; to: number | null };

/** How long a held door stays open: most pass through, some prop it open past HELD_OPEN_S. */
const SHORT_HOLD_MS: [number, number] = [1_000, 8_000];
const LONG_HOLD_MS: [number, number] = [(HELD_OPEN_S + 3) * 1_000, (HELD_OPEN_S + 25) * 1_000];
/**
 * How long a daemon must have watched a door open before its alarm is owed: the hold, two watch rounds,
 * and a start's reading of the door.
 */
const OWED_AFTER_MS = (HELD_OPEN_S + 2 * DOOR_WATCH_S + 5) * 1_000;

/**
 * People at each gateway's door, drawn from a stream of its own (the earlier kinds keep their schedules):
 * cards tapped at its reader, the door pushed (it opens only while the strike is released) and held for a
 * moment or propped open past HELD_OPEN_S, now and then forced, and an operator's unlock command. Records
 * every strike release (as a movement to account for), every opening and every daemon's start.
 */
export function createDoorTraffic(o: {
  world: World;
  rng: Prng;
  api: Api;
  /** Virtual time, absolute ms. */
  now: () => number;
  note: (line: string) => void;
  /** Whether the gateway's store was full at any moment from `from` to `to` (virtual ms). */
  storeFullDuring: (gateway: string, from: number, to: number) => boolean;
}) {
  const { world: w, rng, note } = o;
  const ids = [...w.gateways.keys()];
  const releases: Movement[] = [];
  const openings: Opening[] = [];
  const boots = new Map<string, number[]>();
  /** Doors to swing shut, by when. */
  const closing: { gateway: string; at: number }[] = [];
  /** One visit in twenty steps, or three, or none: the seed decides. */
  const weight = rng.pick([0, 1, 3]);

  for (const g of w.gateways.values()) {
    const alias = doorAlias(g.id);
    let seq = 0;
    g.hardware.gpio.simLine(gpioLineName("door_strike", alias)).watch((released) => {
      note(`door ${g.id} strike ${released ? "released" : "engaged"}`);
      if (released)
        releases.push({
          gateway: g.id,
          channel: 0,
          action: "unlock",
          seq: ++seq,
          at: o.now(),
          device: deviceId(alias),
        });
    });
    g.hardware.gpio.simLine(gpioLineName("door_contact", alias)).watch((closed) => {
      note(`door ${g.id} ${closed ? "closed" : "opened"}`);
      if (!closed) openings.push({ gateway: g.id, from: o.now(), to: null });
      else {
        const open = openings.findLast((x) => x.gateway === g.id && x.to === null);
        if (open) open.to = o.now();
      }
    });
  }

  const door = (gateway: string) => w.gateways.get(gateway)?.hardware.door(doorAlias(gateway));
  const hold = () => o.now() + rng.int(...(rng.int(1, 3) === 1 ? LONG_HOLD_MS : SHORT_HOLD_MS));

  const visits = {
    tap(gateway: string) {
      const card = rng.pick(Object.values(CARDS));
      note(`tap ${card} on ${gateway} ${DOOR_READER}`);
      w.gateways.get(gateway)?.hardware.reader(DOOR_READER).tap(card);
    },
    push(gateway: string) {
      const d = door(gateway);
      if (!d || d.isOpen) return;
      const opened = d.push();
      note(`door ${gateway} pushed: ${opened ? "opens" : "locked"}`);
      if (opened) closing.push({ gateway, at: hold() });
    },
    force(gateway: string) {
      const d = door(gateway);
      if (!d || d.isOpen) return;
      d.force();
      note(`door ${gateway} forced`);
      closing.push({ gateway, at: hold() });
    },
    unlock(gateway: string) {
      const alias = doorAlias(gateway);
      note(`post unlock ${alias}`);
      void o
        .api("POST", `/device/v1/devices/${deviceId(alias)}/commands`, { command: "unlock" })
        .then((res) => note(`posted unlock ${alias} ${res.statusCode} ${res.json().id ?? ""}`));
    },
  };
  const kinds = ["tap", "tap", "push", "push", "push", "force", "unlock"] as const;

  function swingShut(all: boolean): void {
    for (const c of [...closing]) {
      if (!all && c.at > o.now()) continue;
      closing.splice(closing.indexOf(c), 1);
      door(c.gateway)?.close();
    }
  }

  return {
    weight,
    releases,
    openings,
    /** A daemon of `gateway` started (every boot and restart). */
    booted(gateway: string): void {
      boots.set(gateway, [...(boots.get(gateway) ?? []), o.now()]);
    },
    /** Doors due to swing shut do; then, one step in twenty times the weight, someone comes to a door. */
    step(): void {
      swingShut(false);
      if (rng.int(1, 20) > weight) return;
      visits[rng.pick(kinds)](rng.pick(ids));
    },
    /** Everyone leaves: every door swings shut. */
    leave(): void {
      swingShut(true);
    },
    /**
     * Held-open alarms as the cloud has them, per door, against the openings: no alarm for a door that never
     * stood open HELD_OPEN_S (at most one per opening and daemon that watched it), and one for every opening
     * a daemon watched, from its start's reading, for OWED_AFTER_MS, while its store had room (one the full
     * store refused waits in the daemon's memory, and a kill meanwhile loses it, as the docs say).
     */
    async alarmsFollowTheOpenings(): Promise<string[]> {
      const failures: string[] = [];
      for (const gateway of ids) {
        const rows = await w.db
          .selectFrom("hardware_events")
          .select("received_at")
          .where("device_id", "=", deviceId(doorAlias(gateway)))
          .where("event", "=", "door_held_open")
          .execute();
        const mine = openings.filter((x) => x.gateway === gateway);
        const end = o.now();
        const started = boots.get(gateway) ?? [];
        const span = (x: Opening) => (x.to ?? end) - x.from;
        const watchers = (x: Opening) => 1 + started.filter((t) => t > x.from && t < (x.to ?? end)).length;
        const allowed = mine
          .filter((x) => span(x) >= HELD_OPEN_S * 1_000)
          .reduce((n, x) => n + watchers(x), 0);
        const owed = mine.filter((x) => {
          const watchedFrom = Math.max(x.from, ...started.filter((t) => t <= (x.to ?? end)));
          const room = !o.storeFullDuring(gateway, x.from, (x.to ?? end) + OWED_AFTER_MS);
          return room && (x.to ?? end) - watchedFrom >= OWED_AFTER_MS;
        }).length;
        const at = (x: Opening) => `${new Date(x.from).toISOString()} for ${span(x)} ms`;
        if (rows.length > allowed)
          failures.push(
            `${doorAlias(gateway)}: ${rows.length} held-open alarms, but it stood open ${HELD_OPEN_S} s or more only ${allowed} time(s) (openings ${mine.map(at).join(", ")})`,
          );
        if (rows.length < owed)
          failures.push(
            `${doorAlias(gateway)}: ${rows.length} held-open alarms for ${owed} opening(s) watched ${OWED_AFTER_MS / 1000} s (openings ${mine.map(at).join(", ")})`,
          );
      }
      return failures;
    },
    /** Once quiet: every door closed with its strike engaged, and the cloud says LOCKED and closed. */
    async doorsAtRest(get: (url: string) => Promise<LightMyRequestResponse>): Promise<string[]> {
      const failures: string[] = [];
      for (const gateway of ids) {
        const alias = doorAlias(gateway);
        const d = door(gateway);
        const device = (await get(`/device/v1/devices/${deviceId(alias)}`)).json();
        note(
          `end ${alias} strike ${d?.isStrikeReleased ? "released" : "engaged"} lock_state ${device.lock_state}`,
        );
        if (d?.isStrikeReleased)
          failures.push(`${alias}: its strike is still released after the world ran quiet`);
        if (device.lock_state !== "LOCKED")
          failures.push(
            `${alias}: the cloud says lock_state ${device.lock_state} of a door locked and closed`,
          );
      }
      return failures;
    },
  };
}
