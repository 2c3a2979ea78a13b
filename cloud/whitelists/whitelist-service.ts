import type { Logger } from "pino";
import { AppError } from "../../shared/api/errors.ts";
import type {
  EntityModification,
  TargetModification,
  TargetQuery,
  Whitelist,
  WhitelistEntityList,
  WhitelistList,
  WhitelistTargetList,
} from "../../shared/api/whitelist.ts";
import { DEFAULT_MAX_WHITELISTS_PER_DEVICE } from "../../shared/domain/whitelist-entity.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { type AuditOrigin, recordAudit } from "../audit/audit-log.ts";
import { can, type Principal, requireClient } from "../auth/principal.ts";
import type { GatewayPublisher } from "../ports.ts";
import type { Db } from "../store/db.ts";
import type { WhitelistsTable } from "../store/tables/whitelist-tables.ts";
import { addEntity, type CardChange, type OnCardChange, removeEntity } from "./entity-batch.ts";
import { presentEntity, presentTarget, presentWhitelist, whitelistUri } from "./present-whitelist.ts";
import { withDeadline } from "./read-deadline.ts";
import { type ItemFailure, runBatch } from "./run-batch.ts";
import { addTarget, removeTarget } from "./target-batch.ts";
import { whitelistRepository } from "./whitelist-repository.ts";

export type WhitelistOptions = {
  /** Entity and target reads answer 504 after this long (default 5 s, on the injected clock). */
  readTimeoutMs?: number;
  /** Whitelists one device may be targeted by directly (default 3, the spec's). */
  maxPerDevice?: number;
};

export const DEFAULT_WHITELIST_READ_TIMEOUT_MS = 5_000;

/** An audit entry's field changes for one card: its id always, then the fields that moved. */
function cardChanges({ cardId, before, after }: CardChange) {
  const changes: Record<string, { from: unknown; to: unknown }> = {
    card_id: { from: before ? cardId : null, to: after ? cardId : null },
  };
  for (const field of ["status", "expires_at", "is_master_key", "comment"] as const) {
    const from = before ? (field === "is_master_key" ? before[field] === 1 : before[field]) : null;
    const to = after ? (field === "is_master_key" ? after[field] === 1 : after[field]) : null;
    if (from !== to) changes[field] = { from, to };
  }
  return changes;
}

/**
 * The whitelist service (spec: Whitelist): an operator function, closed to riders' tokens. Every client of
 * the operator reads its whitelists and manages their cards (integrators manage entities); targets are
 * the service operator's set-up, so changing them needs SUPERADMIN (docs/decisions/whitelists.md).
 */
export function createWhitelistService(deps: {
  db: Db;
  clock: Clock;
  log: Logger;
  gateways: GatewayPublisher;
  options?: WhitelistOptions;
}) {
  const { db, clock, log, gateways } = deps;
  const readTimeoutMs = deps.options?.readTimeoutMs ?? DEFAULT_WHITELIST_READ_TIMEOUT_MS;
  const maxPerDevice = deps.options?.maxPerDevice ?? DEFAULT_MAX_WHITELISTS_PER_DEVICE;
  const lists = whitelistRepository(db);

  /** Another operator's whitelist answers exactly like a missing one. */
  async function findWhitelist(principal: Principal, id: string): Promise<WhitelistsTable> {
    const client = requireClient(principal, "Whitelist management");
    const row = await lists.findForOperator(client.operatorId, id);
    if (!row) throw new AppError("ERRORS.NOT_FOUND", `Whitelist ${id} not found`);
    return row;
  }

  /** Runs a batch and tells the gateways whose keys changed once it is over, also when it stopped early. */
  async function batch(run: (changed: Set<string>) => Promise<ItemFailure[]>): Promise<ItemFailure[]> {
    const changed = new Set<string>();
    try {
      return await run(changed);
    } finally {
      if (changed.size > 0) {
        try {
          gateways.keysChanged([...changed].sort());
        } catch (err) {
          // Key sync catches up from the recorded versions; the batch itself is committed.
          log.error({ err }, "telling gateways of new keys failed");
        }
      }
    }
  }

  return {
    async list(principal: Principal): Promise<WhitelistList> {
      const client = requireClient(principal, "Whitelist management");
      const rows = await lists.listForOperator(client.operatorId);
      return { data: rows.map(presentWhitelist), uri: "/whitelist/v1/whitelists" };
    },

    /**
     * The caller's whitelists that target the location or any of its devices. Like the spec's route it has
     * no 404: an unknown or another operator's location lists nothing.
     */
    async atLocation(principal: Principal, locationId: string): Promise<WhitelistList> {
      const client = requireClient(principal, "Whitelist management");
      const rows = await lists.atLocation(client.operatorId, locationId);
      return {
        data: rows.map(presentWhitelist),
        uri: `/whitelist/v1/locations/${locationId}/whitelists`,
      };
    },

    async get(principal: Principal, id: string): Promise<Whitelist> {
      return presentWhitelist(await findWhitelist(principal, id));
    },

    entities(principal: Principal, id: string): Promise<WhitelistEntityList> {
      return withDeadline(clock, readTimeoutMs, async () => {
        const list = await findWhitelist(principal, id);
        const rows = await lists.entities(list.id);
        const now = clock.now();
        return { data: rows.map((r) => presentEntity(r, now)), uri: `${whitelistUri(list.id)}/entities` };
      });
    },

    targets(principal: Principal, id: string, query: TargetQuery): Promise<WhitelistTargetList> {
      return withDeadline(clock, readTimeoutMs, async () => {
        const list = await findWhitelist(principal, id);
        const rows = await lists.targets(list.id, query.type);
        return { data: rows.map(presentTarget), uri: `${whitelistUri(list.id)}/targets` };
      });
    },

    /**
     * Item by item (run-batch.ts); the failed items, or none when all were applied. With an origin, each
     * card changed is audited (`whitelist.card-add`, `whitelist.card-remove`) in its item's transaction.
     */
    async modifyEntities(
      principal: Principal,
      id: string,
      body: EntityModification,
      origin?: AuditOrigin,
    ): Promise<ItemFailure[]> {
      const list = await findWhitelist(principal, id);
      const now = clock.now();
      const audit: OnCardChange | undefined = origin
        ? (trx, change) =>
            recordAudit(
              trx,
              origin,
              {
                operatorId: list.operator_id,
                action: change.after ? "whitelist.card-add" : "whitelist.card-remove",
                subject: { type: "whitelist", id: list.id },
                changes: cardChanges(change),
              },
              now,
            )
        : undefined;
      return batch((changed) =>
        body.operation === "ADD"
          ? runBatch(db, body.entities, addEntity(list.id, now, audit), changed)
          : runBatch(db, body.entities, removeEntity(list.id, now, audit), changed),
      );
    },

    async modifyTargets(principal: Principal, id: string, body: TargetModification): Promise<ItemFailure[]> {
      const client = requireClient(principal, "Whitelist management");
      // Targets are the service operator's set-up (spec: Whitelist rule 4). Checked before the lookup, so
      // the answer is the same whoever's whitelist the id names.
      if (!can(client, "SUPERADMIN"))
        throw new AppError(
          "ERRORS.FORBIDDEN",
          "Changing a whitelist's targets needs the SUPERADMIN permission",
        );
      const list = await findWhitelist(client, id);
      const now = clock.now();
      return batch((changed) =>
        body.operation === "ADD"
          ? runBatch(db, body.targets, addTarget(list.id, list.operator_id, now, maxPerDevice), changed)
          : runBatch(db, body.targets, removeTarget(list.id, now), changed),
      );
    },
  };
}

export type WhitelistService = ReturnType<typeof createWhitelistService>;
