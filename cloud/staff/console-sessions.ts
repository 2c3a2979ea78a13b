import { createHash, randomBytes, randomUUID } from "node:crypto";
import { AppError } from "../../shared/api/errors.ts";
import type { StaffRole } from "../../shared/domain/staff-roles.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { createFailureLimiter, type FailurePolicy } from "../auth/failure-limiter.ts";
import type { Db } from "../store/db.ts";
import { type Staff, staffRepository } from "./staff-repository.ts";
import type { StaffService } from "./staff-service.ts";
import { staffSessionRepository } from "./staff-session-repository.ts";

export const DEFAULT_IDLE_TIMEOUT_MS = 30 * 60_000;

/** 20 failed sign-ins a minute from one address block it until the oldest leaves the minute (as S8's). */
const PER_ADDRESS: FailurePolicy = { max: 20, windowMs: 60_000 };
/**
 * 10 failed sign-ins of one account within 15 minutes block it for a minute, doubling with each further
 * failure up to 15 minutes, until it has gone an hour without one: guessing a password from many
 * addresses stays slow, and its owner is kept out for minutes at most.
 */
const PER_ACCOUNT: FailurePolicy = {
  max: 10,
  windowMs: 15 * 60_000,
  backoff: { baseMs: 60_000, maxMs: 15 * 60_000, forgetMs: 60 * 60_000 },
};

export type ConsoleSessionOptions = {
  /** A session not used for this long is over (default 30 minutes). */
  idleTimeoutMs?: number;
  signInLimits?: { perAccount?: FailurePolicy; perAddress?: FailurePolicy };
};

/** A live console session: who, and the CSRF token its state-changing requests must carry. */
export type SignedIn = {
  sessionId: string;
  csrfToken: string;
  staff: { id: string; email: string; role: StaffRole; operatorId: string | null };
};

const tokenHash = (token: string) => createHash("sha256").update(token).digest("hex");
const randomToken = () => randomBytes(32).toString("base64url");

/**
 * The console's session layer: a random token in the cookie, its SHA-256 in the store (revocable), an
 * idle timeout on the injected clock. Any way of proving who someone is (a password here; an OIDC
 * provider's callback later) ends in `open`, so every session looks and ends alike.
 */
export function createConsoleSessions(deps: {
  db: Db;
  clock: Clock;
  staff: StaffService;
  options?: ConsoleSessionOptions;
}) {
  const sessions = staffSessionRepository(deps.db);
  const staff = staffRepository(deps.db);
  const idleMs = deps.options?.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
  const limits = deps.options?.signInLimits;
  // Per process, like the token endpoint's (docs/decisions/replicas.md).
  const byAddress = createFailureLimiter({ clock: deps.clock, policy: limits?.perAddress ?? PER_ADDRESS });
  const byAccount = createFailureLimiter({ clock: deps.clock, policy: limits?.perAccount ?? PER_ACCOUNT });
  const now = () => deps.clock.now();

  const signedIn = (sessionId: string, csrfToken: string, s: Staff): SignedIn => ({
    sessionId,
    csrfToken,
    staff: { id: s.id, email: s.email, role: s.role, operatorId: s.operatorId },
  });

  /** Opens a session for a staff member whose identity is proven; the token goes in the cookie only. */
  async function open(s: Staff): Promise<{ token: string; session: SignedIn }> {
    const token = randomToken();
    const ts = now().toISOString();
    const record = {
      id: randomUUID(),
      staffId: s.id,
      tokenHash: tokenHash(token),
      csrfToken: randomToken(),
      createdAt: ts,
      lastSeenAt: ts,
      revokedAt: null,
    };
    await sessions.insert(record);
    return { token, session: signedIn(record.id, record.csrfToken, s) };
  }

  return {
    idleTimeoutMs: idleMs,
    open,

    /**
     * Email and password: a session, or one refusal alike for an unknown email, a wrong password and a
     * disabled account (401); 429 with Retry-After while the account or the address is blocked. A
     * refusal writes nothing.
     */
    async signIn(email: string, password: string, address: string) {
      const account = email.toLowerCase();
      const wait = Math.max(byAddress.retryAfterS(address), byAccount.retryAfterS(account));
      if (wait > 0)
        throw new AppError(
          "ERRORS.RATE_LIMITED",
          "Too many failed sign-ins; try again later",
          {},
          { "retry-after": String(wait) },
        );
      const found = await deps.staff.authenticate(email, password);
      if (!found) {
        byAddress.fail(address);
        byAccount.fail(account);
        throw new AppError("ERRORS.UNAUTHORIZED", "Wrong email or password");
      }
      return open(found);
    },

    /**
     * The live session a cookie's token names, or null (unknown, signed out, idle too long, disabled).
     * Writes only to end a session found idle too long, which stays over whatever the clock does next.
     */
    async resolve(token: string): Promise<SignedIn | null> {
      const record = await sessions.findUnrevoked(tokenHash(token));
      if (!record) return null;
      if (now().getTime() - Date.parse(record.lastSeenAt) >= idleMs) {
        await sessions.revoke(record.id, now().toISOString());
        return null;
      }
      const s = await staff.find(record.staffId);
      if (!s || s.disabledAt !== null) return null;
      return signedIn(record.id, record.csrfToken, s);
    },

    /** A request of the session went through: its idle time starts again. */
    touch: (session: SignedIn) => sessions.touch(session.sessionId, now().toISOString()),

    signOut: (session: SignedIn) => sessions.revoke(session.sessionId, now().toISOString()),
  };
}

export type ConsoleSessions = ReturnType<typeof createConsoleSessions>;
