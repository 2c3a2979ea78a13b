import { SignInCallbackAnswer } from "../../shared/api/external-users.ts";
import { toE164 } from "../../shared/api/phone-number.ts";
import type { CallbackOutcome } from "./verification-callback.ts";

export type PhoneInAnswer =
  | { kind: "absent" }
  | { kind: "set"; value: string | null }
  /** Not a valid E.164 number: ignored (and logged), the sign-in still counts. */
  | { kind: "invalid" };

export type SignInAnswer =
  | { ok: true; serviceUserId: string; phone: PhoneInAnswer }
  | { ok: false; why: string };

/**
 * What a sign-in verification answer (status below 500) says. Only a 2xx answer can verify: a 4xx is the
 * operator's rejection, and a 3xx is not followed and carries no verification (S22). The body must be a
 * JSON object naming the user (`service_user_id`, or `bikeep_user_id` from servers written for the
 * original service); it may add the user's phone number (`phone_number`, E.164, null to forget it).
 */
export function readSignInAnswer(outcome: Extract<CallbackOutcome, { kind: "answered" }>): SignInAnswer {
  const { status, body } = outcome;
  if (status >= 400) return { ok: false, why: `the operator rejected it (${status})` };
  if (status >= 300)
    return { ok: false, why: `the operator answered with a redirect (${status}), not followed` };
  if (body.kind === "too-large") return { ok: false, why: "the operator's answer is too large" };
  if (body.kind !== "json") return { ok: false, why: "the operator's answer is not JSON" };
  const parsed = SignInCallbackAnswer.safeParse(body.value);
  if (!parsed.success || typeof body.value !== "object" || Array.isArray(body.value))
    return { ok: false, why: "the operator's answer is not a JSON object with service_user_id" };
  const ids = [parsed.data.service_user_id, parsed.data.bikeep_user_id].filter(
    (v): v is string => v !== undefined,
  );
  const id = ids[0]?.toLowerCase();
  if (id === undefined) return { ok: false, why: "the operator's answer has no service_user_id" };
  if (ids.some((v) => v.toLowerCase() !== id))
    return { ok: false, why: "the operator's answer names two different users" };
  const raw = parsed.data.phone_number;
  const phone: PhoneInAnswer =
    raw === undefined
      ? { kind: "absent" }
      : raw === null
        ? { kind: "set", value: null }
        : ((e164) => (e164 ? { kind: "set" as const, value: e164 } : { kind: "invalid" as const }))(
            toE164(raw),
          );
  return { ok: true, serviceUserId: id, phone };
}
