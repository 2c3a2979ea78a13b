/**
 * The console's demo hardware panel, on the demo's side: the simulated site of each location as the
 * simulator holds it, and each act played with the function the stdin console plays it with
 * (demo-console.ts `play`), so the panel and `npm start`'s console cannot drift apart. The cloud starts
 * before the gateways and their simulators (they need its broker), so the panel is handed to the cloud
 * first and attached to the running demo once it runs; until then it shows nothing and refuses every act.
 */
import type { DemoHardware } from "../cloud/console/demo-hardware.ts";
import { derivedId } from "../cloud/manifest/apply-manifest.ts";
import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";
import type { DemoAction, DemoCard, DemoDevice, DemoLocation } from "../shared/api/console-demo.ts";
import { maskCardId } from "../shared/domain/card-id.ts";
import { type ConsoleDemo, ConsoleError, runOf } from "./console-locations.ts";
import { createDemoConsole, type DemoConsole } from "./demo-console.ts";
import { DEMO_BUS, demoReaderName, isDoorType } from "./demo-wiring.ts";

/** A card on no demo list: the reader reads it and the gateway refuses it. */
export const UNKNOWN_CARD = "0badc0ffee";

type Operator = SiteManifest["operators"][number];
type ManifestLocation = Operator["locations"][number];
type Place = { id: string; operatorId: string; loc: ManifestLocation; cards: string[]; labels: string[] };

export type DemoPanel = {
  /** What the cloud's console calls (its `demoHardware` option). */
  hardware: DemoHardware;
  /** Plugs in the running demo's gateways and simulators. */
  attach(demo: ConsoleDemo): void;
};

/** The cards of the operator's whitelists that target the location, then the unknown card. */
function cardsAt(op: Operator, code: string): { cards: string[]; labels: string[] } {
  const cards: string[] = [];
  const labels: string[] = [];
  for (const list of op.whitelists ?? []) {
    if (!list.targets.some((t) => t.location === code)) continue;
    for (const e of list.entities) {
      if (cards.includes(e.id)) continue;
      cards.push(e.id);
      labels.push(`${e.comment || "A card"}${e.status === "ACTIVE" ? "" : ` (${e.status.toLowerCase()})`}`);
    }
  }
  return { cards: [...cards, UNKNOWN_CARD], labels: [...labels, "Unknown card"] };
}

/** The manifest's locations, the first of a repeated code only (the stdin console addresses by code). */
function placesOf(manifest: SiteManifest): Place[] {
  const seen = new Set<string>();
  const out: Place[] = [];
  for (const op of manifest.operators)
    for (const loc of op.locations) {
      if (seen.has(loc.code.toLowerCase())) continue;
      seen.add(loc.code.toLowerCase());
      const id = loc.id ?? derivedId(op.id, "location", loc.code);
      out.push({ id, operatorId: op.id, loc, ...cardsAt(op, loc.code) });
    }
  return out;
}

function devicesOf(demo: ConsoleDemo | null, loc: ManifestLocation): DemoDevice[] {
  return loc.gateways.flatMap((gw) => {
    const run = demo ? runOf(demo, gw.id) : null;
    return gw.devices.map((d) => {
      const channel = run && d.bus ? run.sim.board(DEMO_BUS, d.bus.board).channel(d.bus.channel) : null;
      return {
        alias: d.alias,
        type: d.type,
        gateway_id: gw.id,
        simulated: run !== null,
        latch: channel?.latch ?? null,
        door_open: channel?.doorOpen ?? null,
        tamper: channel?.tamper ?? null,
        reader: isDoorType(d.type) && (run?.sim.readers.has(demoReaderName(d.alias)) ?? false),
      };
    });
  });
}

export function createDemoPanel(manifest: SiteManifest): DemoPanel {
  const places = placesOf(manifest);
  let demo: ConsoleDemo | null = null;
  let hands: DemoConsole | null = null;

  const argsOf = (place: Place, a: DemoAction): string[] | string => {
    if (a.action === "turn") return [a.device, a.latch];
    if (a.action !== "tap") return [a.device];
    const card = place.cards[a.card];
    return card === undefined ? `no card ${a.card} at ${place.loc.code}` : [a.device, card];
  };

  const hardware: DemoHardware = {
    // Nothing until the gateways run: a device drawn before would look left to a gateway of your own.
    locations: (): DemoLocation[] =>
      (demo ? places : []).map((p) => ({
        id: p.id,
        operator_id: p.operatorId,
        code: p.loc.code,
        label: p.loc.label,
        devices: devicesOf(demo, p.loc),
        cards: p.cards.map(
          (c, index): DemoCard => ({ index, label: p.labels[index] ?? "", card: maskCardId(c) }),
        ),
      })),
    act: (a) => Promise.resolve(play(a)),
  };

  function play(a: DemoAction): { done: string } | { refused: string } {
    const place = places.find((p) => p.id === a.location_id);
    if (!place) return { refused: `no location ${a.location_id} in the demo` };
    if (!hands) return { refused: "the demo's gateways are still starting; try again in a moment" };
    const args = argsOf(place, a);
    if (typeof args === "string") return { refused: args };
    try {
      return { done: hands.play(place.loc.code, a.action, args) };
    } catch (err) {
      if (err instanceof ConsoleError) return { refused: err.message };
      throw err;
    }
  }

  return {
    hardware,
    attach(running) {
      demo = running;
      hands = createDemoConsole(running);
    },
  };
}
