import type {
  ConsoleGatewaySync,
  ConsoleWhitelist,
  ConsoleWhitelistList,
  ConsoleWhitelistSummary,
  ConsoleWhitelistTarget,
} from "../../shared/api/console-whitelists.ts";
import { operatorsSeenBy, type StaffScope } from "../../shared/domain/staff-roles.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { ClientPrincipal } from "../auth/principal.ts";
import { keySyncRepository } from "../key-sync/key-sync-repository.ts";
import type { Db } from "../store/db.ts";
import type { WhitelistTargetsTable } from "../store/tables/whitelist-tables.ts";
import type { WhitelistService } from "../whitelists/whitelist-service.ts";
import {
  consoleWhitelistRepository,
  type GatewayKeys,
  type TargetName,
} from "./console-whitelist-repository.ts";

/**
 * The console's whitelist views (docs/decisions/console.md): the cards and targets as the whitelist service
 * reads them, and for each gateway serving a target, its key-set version against the cloud's.
 */
export function createConsoleWhitelists(deps: { db: Db; clock: Clock; whitelists: WhitelistService }) {
  const repo = consoleWhitelistRepository(deps.db);
  const keys = keySyncRepository(deps.db);

  /** A gateway's sync state from what is stored (docs/decisions/console.md: "pending since"). */
  async function syncOf(k: GatewayKeys, keysSynced: boolean): Promise<ConsoleGatewaySync> {
    const cloud = k.version ?? 0;
    const held = k.confirmed_version ?? null;
    const base = {
      gateway_id: k.gateway_id,
      location_id: k.location_id,
      keys_synced: keysSynced,
      cloud_version: cloud,
      held_version: held,
      confirmed_at: k.confirmed_at ?? null,
    };
    if (held === cloud) return { ...base, state: "in_sync", pending_since: null, pending_since_exact: false };
    if (held === null && cloud === 0)
      return { ...base, state: "not_reported", pending_since: null, pending_since_exact: false };
    const from = held !== null && held < cloud ? held : 0;
    const first = held !== null && held > cloud ? undefined : await repo.firstChangeAfter(k.gateway_id, from);
    const exact = first !== undefined && first.version === from + 1;
    return {
      ...base,
      state: "pending",
      pending_since: exact ? first.created_at : (k.updated_at ?? null),
      pending_since_exact: exact,
    };
  }

  /** The gateways serving the whitelist's targets, each with its sync state (cached across lists). */
  async function gatewaysOf(whitelistId: string, cache: Map<string, GatewayKeys>) {
    const all = await keys.reachOf(whitelistId, false);
    const synced = new Set((await keys.reachOf(whitelistId, true)).map((r) => r.gateway_id));
    const ids = [...new Set(all.map((r) => r.gateway_id))].sort();
    const missing = ids.filter((id) => !cache.has(id));
    for (const k of await repo.gatewayKeys(missing)) cache.set(k.gateway_id, k);
    const out: ConsoleGatewaySync[] = [];
    for (const id of ids) {
      const k = cache.get(id);
      if (k) out.push(await syncOf(k, synced.has(id)));
    }
    return out;
  }

  async function targetsOf(rows: WhitelistTargetsTable[]): Promise<ConsoleWhitelistTarget[]> {
    const ids = (type: string) => rows.filter((r) => r.target_type === type).map((r) => r.target_id);
    const names = new Map<string, TargetName>();
    for (const n of await repo.locationNames(ids("location"))) names.set(`location/${n.id}`, n);
    for (const n of await repo.deviceNames(ids("device"))) names.set(`device/${n.id}`, n);
    return rows.map((r) => {
      const n = names.get(`${r.target_type}/${r.target_id}`);
      const place = n ? `#${n.code} ${n.label}` : null;
      return {
        type: r.target_type,
        id: r.target_id,
        keys_only: r.keys_only === 1,
        label: n && place ? (n.alias !== undefined ? `${place} · ${n.alias}` : place) : null,
        location_id: n?.location_id ?? null,
      };
    });
  }

  return {
    /** The whitelists of the operators the staff member reads, with counts and a sync summary. */
    async list(staff: StaffScope): Promise<ConsoleWhitelistList> {
      const lists = await repo.whitelistsOf(operatorsSeenBy(staff));
      const ids = lists.map((l) => l.id);
      const [cards, targets] = await Promise.all([repo.cardCounts(ids), repo.targetsOf(ids)]);
      const cache = new Map<string, GatewayKeys>();
      const data: ConsoleWhitelistSummary[] = [];
      for (const l of lists) {
        const mine = targets.filter((t) => t.whitelist_id === l.id);
        const gateways = await gatewaysOf(l.id, cache);
        data.push({
          id: l.id,
          operator_id: l.operator_id,
          name: l.name,
          description: l.description,
          cards: cards.get(l.id) ?? 0,
          targets: {
            locations: mine.filter((t) => t.target_type === "location").length,
            devices: mine.filter((t) => t.target_type === "device").length,
            keys_only: mine.filter((t) => t.keys_only === 1).length,
          },
          sync: { gateways: gateways.length, pending: gateways.filter((g) => g.state === "pending").length },
        });
      }
      return { data };
    },

    /** One whitelist through the whitelist service (another operator's: 404), with its gateways' sync. */
    async get(principal: ClientPrincipal, id: string): Promise<ConsoleWhitelist> {
      const list = await deps.whitelists.get(principal, id);
      const cards = await deps.whitelists.entities(principal, id);
      const rows = await repo.targetsOf([list.id]);
      return {
        id: list.id,
        operator_id: principal.operatorId,
        name: list.name,
        description: list.description,
        cards: cards.data,
        targets: await targetsOf(rows),
        gateways: await gatewaysOf(list.id, new Map()),
        now: deps.clock.now().toISOString(),
      };
    },

    /** Whose whitelist this is: the staff member's own operator, or for a superadmin the owner's. */
    async operatorFor(own: string | null, id: string): Promise<string | undefined> {
      return own ?? (await repo.operatorOf(id));
    },
  };
}

export type ConsoleWhitelists = ReturnType<typeof createConsoleWhitelists>;
