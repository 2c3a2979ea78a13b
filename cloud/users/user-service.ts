import type { Logger } from "pino";
import { AppError } from "../../shared/api/errors.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { applyPendingInvites } from "../access-lists/invites.ts";
import type { TokenIssuer } from "../auth/tokens.ts";
import type { Db } from "../store/db.ts";
import type { RefreshInput, SignInInput, SignUpInput } from "./auth-requests.ts";
import { type CallbackLimits, createCallbackLimits, type RateLimitOptions } from "./callback-limits.ts";
import { pendingSignUps } from "./pending-sign-ups.ts";
import { createRefreshTokenIntake } from "./refresh-token-intake.ts";
import { redeemRefreshToken } from "./refresh-tokens.ts";
import { riderTokenGeneration } from "./rider-token-revocation.ts";
import { readSignInAnswer } from "./sign-in-answer.ts";
import { createSignInPacing } from "./sign-in-pacing.ts";
import { type ExternalUser, userRepository } from "./user-repository.ts";
import { type CallbackOutcome, createCallbackClient } from "./verification-callback.ts";

/** Tunables of external-user authentication; the defaults are the spec's and docs/decisions/external-users.md's. */
export type ExternalUserOptions = {
  /** The verification callbacks' limit (default 5 s, spec: Limits). */
  callbackTimeoutMs?: number;
  /** The most of a callback answer's body read (default 16 KB). */
  callbackBodyLimitBytes?: number;
  rateLimits?: RateLimitOptions;
};

export type UserServiceDeps = {
  db: Db;
  clock: Clock;
  log: Logger;
  tokens: TokenIssuer;
  options?: ExternalUserOptions;
};

type Which = "sign-up" | "sign-in";

/** The one message of ERRORS.FAILED_TO_SIGN_IN, whatever the cause (spec: unknown user, rejected, mismatch). */
export const SIGN_IN_FAILED =
  "Sign-in failed: the user is unknown, or the operator did not verify the sign-in";

/**
 * Sign-up, sign-in and refresh of external users (spec: Authentication, External users). Sign-up and
 * sign-in call the operator's verification endpoints; refresh needs no round trip.
 */
export function createUserService(deps: UserServiceDeps) {
  const { db, clock, log, tokens } = deps;
  const users = userRepository(db, db);
  const pending = pendingSignUps(db);
  const limits: CallbackLimits = createCallbackLimits(clock, deps.options?.rateLimits);
  const callbacks = createCallbackClient({
    clock,
    timeoutMs: deps.options?.callbackTimeoutMs,
    maxBodyBytes: deps.options?.callbackBodyLimitBytes,
  });
  const pacing = createSignInPacing({ clock, maxMs: callbacks.timeoutMs });
  const refreshTokens = createRefreshTokenIntake(db, { log });

  /** A callback without an answer: none in time, an address refused, or no answer at all. */
  function unanswered(
    which: Which,
    operatorId: string,
    outcome: Exclude<CallbackOutcome, { kind: "answered" }>,
  ): AppError {
    if (outcome.kind === "timed-out")
      return new AppError(
        "ERRORS.SERVICE_TIMED_OUT",
        `The operator's ${which} verification endpoint did not answer within ${callbacks.timeoutMs / 1000} s`,
      );
    // The reason (an address, a DNS answer) is the operator's business: logged, not told to the caller.
    log.warn(
      { operator_id: operatorId, callback: which, reason: outcome.reason },
      "verification callback failed",
    );
    return new AppError(
      "ERRORS.OPERATOR_ERROR",
      `The operator's ${which} verification endpoint could not be reached`,
    );
  }

  function operatorErrorStatus(which: Which, status: number): AppError {
    return new AppError(
      "ERRORS.OPERATOR_ERROR",
      `The operator's ${which} verification endpoint answered ${status}`,
      { operator_status: status },
    );
  }

  /** Sign-in's only refusal: the same code and words whether the id exists or the operator said no. */
  const signInFailed = () => new AppError("ERRORS.FAILED_TO_SIGN_IN", SIGN_IN_FAILED);

  return {
    /**
     * Sends the sign-up verification callback with the user's service_user_id: the id of the user the
     * operator accepted before, or of a pending sign-up (pending-sign-ups.ts). The user is made only when
     * the operator accepts (an answer below 400); a rejection forgets the pending sign-up, and a failure
     * keeps it for a day, so a repeat calls back again with the same id (spec: sign-up step 5).
     */
    async signUp(input: SignUpInput, from: string): Promise<void> {
      const target = await users.callbacksOf(input.operatorId);
      limits.signUp.admit(target ? input.operatorId : null, from);
      if (!target)
        throw new AppError(
          "ERRORS.FAILED_TO_SIGN_UP",
          "Unknown operator_id, or the operator has no external users",
        );
      const subject = await pending.subject(input.operatorId, input.userId, clock.now());
      const id = subject.kind === "user" ? subject.user.id : subject.pending.id;
      const outcome = await callbacks.post({
        url: target.signUpUrl,
        payload: { user_id: input.userId, service_user_id: id, bikeep_user_id: id },
        allowPrivateAddresses: target.allowPrivateAddresses,
        secrets: target.secrets,
        readBody: false,
      });
      if (outcome.kind !== "answered") throw unanswered("sign-up", input.operatorId, outcome);
      // Spec: any status below 400 accepts; a redirect is not followed and counts as the answer.
      if (outcome.status >= 500) throw operatorErrorStatus("sign-up", outcome.status);
      if (outcome.status >= 400) {
        if (subject.kind === "pending") await pending.drop(subject.pending);
        throw new AppError(
          "ERRORS.OPERATOR_REJECTION",
          `The operator's sign-up verification endpoint rejected the user (${outcome.status})`,
          { operator_status: outcome.status },
        );
      }
      if (subject.kind === "pending") await pending.accept(subject.pending, clock.now());
    },

    /**
     * Sends the sign-in verification callback and, when the operator confirms the same service_user_id,
     * issues an access token and a refresh token (a pending sign-up the operator so confirms becomes the
     * user). Learns the user's phone number from the answer, then applies the access-list invites waiting
     * for it. Every refusal answers alike, and an unknown id as late as a refusal (sign-in-pacing.ts).
     */
    async signIn(input: SignInInput, from: string): Promise<{ access_token: string; refresh_token: string }> {
      const target = await users.callbacksOf(input.operatorId);
      limits.signIn.admit(target ? input.operatorId : null, from);
      if (!target) throw signInFailed();
      const known = await users.find(input.operatorId, input.serviceUserId);
      const waiting = known
        ? undefined
        : await pending.find(input.operatorId, input.serviceUserId, clock.now());
      const subject = known ?? waiting;
      if (!subject) {
        await pacing.wait(input.operatorId);
        throw signInFailed();
      }
      const started = clock.now().getTime();
      const outcome = await callbacks.post({
        url: target.signInUrl,
        payload: { user_id: subject.userId, challenge_token: input.challengeToken },
        allowPrivateAddresses: target.allowPrivateAddresses,
        secrets: target.secrets,
        readBody: true,
      });
      if (outcome.kind !== "answered") throw unanswered("sign-in", input.operatorId, outcome);
      pacing.record(input.operatorId, clock.now().getTime() - started);
      // The spec leaves the code of a 5xx open: the operator's error, as for sign-up (docs/decisions/external-users.md).
      if (outcome.status >= 500) throw operatorErrorStatus("sign-in", outcome.status);
      const answer = readSignInAnswer(outcome);
      const mismatch = answer.ok && answer.serviceUserId !== subject.id;
      if (!answer.ok || mismatch) {
        // Why goes to the log only: told to the caller, it would say that the id exists.
        const reason = answer.ok ? "the operator named another user" : answer.why;
        log.info({ operator_id: subject.operatorId, service_user_id: subject.id, reason }, "sign-in refused");
        throw signInFailed();
      }
      const user = known ?? (waiting && (await pending.accept(waiting, clock.now())));
      // A manifest rider took this user_id meanwhile: the operator verified an id that is no user's.
      if (!user || user.id !== subject.id) throw signInFailed();
      if (answer.phone.kind === "invalid")
        log.warn(
          { operator_id: user.operatorId, service_user_id: user.id },
          "sign-in answer holds a phone_number that is not a valid E.164 number; ignored",
        );
      const signedIn: ExternalUser =
        answer.phone.kind === "set" ? { ...user, phoneNumber: answer.phone.value } : user;
      if (signedIn.phoneNumber !== user.phoneNumber) await users.setPhoneNumber(user, signedIn.phoneNumber);
      // Committed (with the sign-ins that came meanwhile) before the answer hands the token out; the
      // generation is read in the same commit, so a revocation is wholly before this sign-in or after it.
      const { refreshToken: refresh_token, generation } = await refreshTokens.issue(
        { id: user.id, operatorId: user.operatorId },
        clock.now(),
      );
      const access_token = await tokens.issueUser({ id: user.id, operatorId: user.operatorId, generation });
      try {
        await applyPendingInvites(
          { db, clock },
          { id: user.id, operatorId: user.operatorId, phoneNumber: signedIn.phoneNumber },
        );
      } catch (err) {
        // The sign-in stands; the invites are tried again at the next one.
        log.error({ err, service_user_id: user.id }, "applying access-list invites failed");
      }
      return { access_token, refresh_token };
    },

    /** A new access token for a live refresh token of this user; the refresh token stays valid. */
    async refresh(input: RefreshInput): Promise<{ access_token: string }> {
      const found = await redeemRefreshToken(
        db,
        { token: input.refreshToken, serviceUserId: input.serviceUserId, operatorId: input.operatorId },
        clock.now(),
      );
      if (!found)
        throw new AppError(
          "ERRORS.AUTHENTICATION_FAILED",
          "The refresh token is unknown, expired or revoked, or belongs to another user",
        );
      const generation = await riderTokenGeneration(db, found.userId);
      return {
        access_token: await tokens.issueUser({ id: found.userId, operatorId: found.operatorId, generation }),
      };
    },

    /** Pooled connections to the operators' servers are dropped. */
    close: () => callbacks.close(),
  };
}

export type UserService = ReturnType<typeof createUserService>;
