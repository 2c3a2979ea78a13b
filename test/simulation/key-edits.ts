import type { LightMyRequestResponse } from "fastify";
import { cardGrantsAt } from "../../cloud/key-sync/key-view.ts";
import type { Grant } from "../../shared/wire/messages.ts";
import type { Prng } from "./determinism.ts";
import { CARDS, KEPT_WHITELIST } from "./sim-site.ts";
import type { World } from "./world.ts";

type Api = (method: "POST", url: string, payload?: object) => Promise<LightMyRequestResponse>;

/** One card's grants at one gateway as the cloud held them, from the moment (virtual ms) their edit was asked. */
export type GrantVersion = { from: number; grants: Grant[] };
/** Every version of the edited cards' grants, by `gateway/card`; a card never edited has none. */
export type GrantHistory = Map<string, GrantVersion[]>;

/** The cards an integrator edits: the plain ones, the inactive one, the one asked of the cloud, the unknown one. */
const EDITED = [CARDS.ann, CARDS.bob, CARDS.inactive, CARDS.asked, CARDS.unknown];

/**
 * An integrator editing the kept whitelist while the site runs: a card added (or replaced) active or
 * inactive, without expiry, expired, or expiring inside the run, sometimes as a master key; or removed.
 * Drawn from a stream of its own, so the earlier kinds keep their schedules. One edit at a time, so each
 * version of a card's grants is known: the one before the edit holds until its answer, the one after from
 * its asking (when it commits in between is the cloud's).
 */
export function createKeyEdits(o: {
  world: World;
  rng: Prng;
  api: Api;
  /** Virtual time, absolute ms. */
  now: () => number;
  note: (line: string) => void;
}) {
  const { world: w, rng, note } = o;
  const history: GrantHistory = new Map();
  const edited = new Set<string>();
  /** One edit in twenty steps, or three, or none: the seed decides. */
  const weight = rng.pick([0, 1, 3]);
  let editing = false;

  /** Reads the card's grants at every gateway as the cloud holds them now, as a version from `from`. */
  async function record(card: string, from: number): Promise<void> {
    for (const gateway of w.gateways.keys()) {
      const key = `${gateway}/${card}`;
      const versions = history.get(key) ?? [];
      versions.push({ from, grants: await cardGrantsAt(w.db, gateway, card) });
      history.set(key, versions);
    }
  }

  function entity(card: string) {
    const now = o.now();
    const expires_at = rng.pick([
      null,
      null,
      new Date(now - 3_600_000).toISOString(),
      new Date(now + rng.int(2_000, 60_000)).toISOString(),
    ]);
    const status = rng.pick(["ACTIVE", "ACTIVE", "INACTIVE"]);
    return { id: card, id_type: "rfid", status, expires_at, is_master_key: rng.int(1, 8) === 1 };
  }

  async function edit(): Promise<void> {
    const card = rng.pick(EDITED);
    const operation = rng.pick(["ADD", "ADD", "REMOVE"] as const);
    const item = operation === "ADD" ? entity(card) : { id: card, id_type: "rfid" };
    const from = o.now();
    // The version before the first edit of a card holds from the start of the run.
    if (!edited.has(card)) {
      edited.add(card);
      await record(card, Number.NEGATIVE_INFINITY);
    }
    editing = true;
    note(`whitelist ${operation} ${JSON.stringify(item)}`);
    const res = await o.api("POST", `/whitelist/v1/whitelists/${KEPT_WHITELIST}/entities`, {
      operation,
      entities: [item],
    });
    note(`whitelist ${operation} ${card} ${res.statusCode}`);
    await record(card, from);
    editing = false;
  }

  return {
    history,
    /** After a step's action: perhaps an edit, which runs on while time moves (one at a time). */
    step(): void {
      if (rng.int(1, 20) > weight || editing) return;
      void edit().catch((err: Error) => {
        editing = false;
        note(`whitelist edit failed: ${err.message}`);
      });
    },
    weight,
  };
}
