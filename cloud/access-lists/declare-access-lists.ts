import type { AccessListKind } from "../../shared/domain/membership.ts";
import type { Db } from "../store/db.ts";
import { accessListRepository } from "./access-list-repository.ts";

export type DeclaredAccessList = { id: string; kind: AccessListKind; name: string };

/**
 * Makes a location's access lists what the site manifest declares (inside apply's transaction). Lists
 * are never deleted: one left out is retired (kept with its members, no longer enforced nor managed) and
 * comes back if declared again. A list id of another operator is refused, since members belong to the
 * operator's users. Returns how many rows were created and updated.
 */
export async function declareAccessLists(
  trx: Db,
  at: { operatorId: string; locationId: string; ts: string },
  lists: readonly DeclaredAccessList[],
): Promise<{ created: number; updated: number }> {
  const { operatorId, locationId, ts } = at;
  const count = { created: 0, updated: 0 };
  const repo = accessListRepository(trx);
  for (const l of lists) {
    const existing = await repo.find(l.id);
    if (!existing) {
      await repo.insert({
        id: l.id,
        operator_id: operatorId,
        location_id: locationId,
        kind: l.kind,
        name: l.name,
        retired_at: null,
        created_at: ts,
        updated_at: ts,
      });
      count.created++;
      continue;
    }
    if (existing.operator_id !== operatorId)
      throw new Error(`access list ${l.id}: the id belongs to another operator's list`);
    const same =
      existing.location_id === locationId &&
      existing.kind === l.kind &&
      existing.name === l.name &&
      existing.retired_at === null;
    if (same) continue;
    await repo.redeclare(l.id, { location_id: locationId, kind: l.kind, name: l.name }, ts);
    count.updated++;
  }
  count.updated += await repo.retireAtExcept(
    locationId,
    lists.map((l) => l.id),
    ts,
  );
  return count;
}
