import type { Command } from "commander";
import { Uuid } from "../../shared/api/uuid.ts";
import { CliExit, EXIT } from "../../shared/cli/exit-codes.ts";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import type { Db } from "../store/db.ts";
import { type RiderRef, revokeRiderTokens } from "./rider-token-revocation.ts";

type WithStore = <T>(fn: (db: Db) => Promise<T>) => Promise<T>;

/** `npm run operator -- revoke-rider-tokens --operator <id> (--user-id <id> | --service-user-id <id>)`. */
export function registerRiderCommands(program: Command, withStore: WithStore, clock: Clock = systemClock) {
  program
    .command("revoke-rider-tokens")
    .description("Revoke every token of a rider (refresh and access tokens): their apps must sign in again")
    .requiredOption("--operator <uuid>", "the rider's operator id")
    .option("--user-id <id>", "the integrator's id of the rider (sign-up's user_id)")
    .option("--service-user-id <uuid>", "the service's id of the rider")
    .action(async (opts: { operator: string; userId?: string; serviceUserId?: string }) => {
      const operatorId = Uuid.safeParse(opts.operator);
      if (!operatorId.success) throw new CliExit(EXIT.usage, "--operator: must be a UUID");
      if ((opts.userId === undefined) === (opts.serviceUserId === undefined))
        throw new CliExit(EXIT.usage, "give exactly one of --user-id and --service-user-id");
      let ref: RiderRef;
      if (opts.userId !== undefined) ref = { operatorId: operatorId.data, userId: opts.userId };
      else {
        const id = Uuid.safeParse(opts.serviceUserId);
        if (!id.success) throw new CliExit(EXIT.usage, "--service-user-id: must be a UUID");
        ref = { operatorId: operatorId.data, serviceUserId: id.data };
      }
      const result = await withStore((db) => revokeRiderTokens(db, ref, clock.now()));
      if (!result) throw new CliExit(EXIT.notFound, "no such rider of this operator");
      const { rider, revoked } = result;
      console.log(
        `revoked the access tokens and ${revoked} refresh token${revoked === 1 ? "" : "s"} of rider ${rider.userId} (service_user_id ${rider.id})`,
      );
    });
}
