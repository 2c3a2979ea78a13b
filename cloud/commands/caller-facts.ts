import type { CommandRequest } from "../../shared/api/command.ts";
import { hasLocationAccess } from "../access-lists/location-access.ts";
import type { Principal } from "../auth/principal.ts";
import type { Db } from "../store/db.ts";
import type { DeviceRecord } from "../store/device-record.ts";
import { userRepository } from "../users/user-repository.ts";
import type { CallerFacts } from "./command-rules.ts";
import { actorOf } from "./device-holding.ts";

/**
 * Reads what the command decision needs to know of whom a command is for: whether they may use the
 * device's location, and whether a lock's user_id names a user of the operator. The operator acting for
 * nobody needs neither, so an integrator's commands cost no extra reads.
 */
export async function readCallerFacts(
  db: Db,
  principal: Principal,
  device: Pick<DeviceRecord, "location_id">,
  body: CommandRequest,
  now: Date,
): Promise<CallerFacts> {
  const named = body.command === "lock" ? body.user_id : undefined;
  const onBehalfKnown =
    named === undefined ||
    (principal.kind === "user" && named === principal.id) ||
    (await userRepository(db).find(principal.operatorId, named)) !== undefined;
  const actor = actorOf(principal, body);
  const hasAccess =
    !actor || actor.operator || !onBehalfKnown
      ? true
      : await hasLocationAccess(db, {
          operatorId: principal.operatorId,
          locationId: device.location_id,
          userId: actor.id,
          now,
        });
  return { hasAccess, onBehalfKnown };
}
