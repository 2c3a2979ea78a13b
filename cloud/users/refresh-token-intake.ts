import type { Logger } from "pino";
import type { Db } from "../store/db.ts";
import { shapedQueries } from "../store/shaped-query.ts";
import { insertTokenQuery, trimTokensQuery } from "./refresh-token-repository.ts";
import { MAX_LIVE_REFRESH_TOKENS, newRefreshTokenRecord } from "./refresh-tokens.ts";
import { generationQuery } from "./rider-token-revocation.ts";

/** A batch at most this big: a burst of sign-ins commits in a few transactions, not in one huge one. */
const MAX_BATCH = 256;

type Rider = { id: string; operatorId: string };
/** A sign-in's commit: its new refresh token, and the rider's token generation read in the same commit. */
export type IssuedRefreshToken = { refreshToken: string; generation: number };

type Waiting = {
  rider: Rider;
  now: Date;
  resolve: (issued: IssuedRefreshToken) => void;
  reject: (err: unknown) => void;
};

export type RefreshTokenIntake = {
  /**
   * Stores a new refresh token of the rider (and trims the rider's dead and surplus ones) with those of the
   * sign-ins that came meanwhile; resolves once committed, so the token may be handed out only then.
   */
  issue(rider: Rider, now: Date): Promise<IssuedRefreshToken>;
};

/**
 * Sign-ins' refresh tokens as a group commit, as the fleet's device reports are (report-intake.ts): while
 * one batch is written, the sign-ins that reach this point wait and go together in the next, one
 * transaction for all; a quiet cloud writes each at once. On SQLite every commit costs WAL writes on the
 * only thread, on PostgreSQL a WAL flush: a batch pays it once. Within the batch each sign-in's statements
 * are the ones a sign-in alone runs, in arrival order (so two sign-ins of one rider trim as they would one
 * after the other), and each reads its rider's generation after its own token is stored: a revocation
 * falls wholly before or wholly after the batch. Each sign-in is answered only after its batch commits; a
 * batch that fails is written again sign-in by sign-in, so one that cannot be stored costs the others
 * nothing, and it alone answers with the error.
 */
export function createRefreshTokenIntake(db: Db, deps: { log: Logger }): RefreshTokenIntake {
  let queue: Waiting[] = [];
  let writing = false;

  // issueRefreshToken's and riderTokenGeneration's statements, compiled once (Kysely's building and
  // compiling them cost more than SQLite's running them).
  const shaped = shapedQueries(db);
  const store = (batch: readonly Waiting[]): Promise<IssuedRefreshToken[]> =>
    db.transaction().execute(async (trx) => {
      const issued: IssuedRefreshToken[] = [];
      for (const { rider, now } of batch) {
        const { token, record } = newRefreshTokenRecord(rider, now);
        await shaped.run("refresh token", record, (r) => insertTokenQuery(db, r), trx);
        // Bounded storage, as issueRefreshToken: dead tokens go, and live ones beyond the newest few.
        const trim = { userId: rider.id, now: record.createdAt, skip: MAX_LIVE_REFRESH_TOKENS - 1 };
        await shaped.run("refresh token trim", trim, (v) => trimTokensQuery(db, v), trx);
        const [row] = await shaped.run(
          "token generation",
          { id: rider.id },
          (v) => generationQuery(db, v),
          trx,
        );
        issued.push({ refreshToken: token, generation: row?.token_generation ?? 0 });
      }
      return issued;
    });

  async function writeAll(): Promise<void> {
    // Every sign-in that reaches this point within this turn of the event loop joins the first batch.
    await new Promise<void>((r) => setImmediate(r));
    while (queue.length > 0) {
      const batch = queue.slice(0, MAX_BATCH);
      queue = queue.slice(batch.length);
      await write(batch);
    }
    writing = false;
  }

  async function write(batch: Waiting[]): Promise<void> {
    let issued: IssuedRefreshToken[];
    try {
      issued = await store(batch);
    } catch (err) {
      if (batch.length === 1) {
        (batch[0] as Waiting).reject(err);
        return;
      }
      deps.log.warn(
        { err, sign_ins: batch.length },
        "a batch of refresh tokens failed: storing them one by one",
      );
      for (const w of batch) await store([w]).then(([one]) => w.resolve(one as IssuedRefreshToken), w.reject);
      return;
    }
    for (const [i, w] of batch.entries()) w.resolve(issued[i] as IssuedRefreshToken);
  }

  return {
    issue(rider, now) {
      return new Promise<IssuedRefreshToken>((resolve, reject) => {
        queue.push({ rider, now, resolve, reject });
        if (!writing) {
          writing = true;
          void writeAll();
        }
      });
    },
  };
}
