import { parsePhoneNumberFromString } from "libphonenumber-js";

/** E.164 as written on the wire: a plus, a country code and at most 15 digits, nothing else. */
const E164_FORM = /^\+[1-9]\d{1,14}$/;

export type PhoneCheck = { ok: true; e164: string } | { ok: false; message: string };

/**
 * A phone number of the API (access-list members and invites, what sign-in learns): strict E.164 form and
 * a number libphonenumber knows to be valid for its country, so typos do not become invites nobody can
 * accept. A number in another form is refused with its E.164 spelling as a hint.
 */
export function checkE164(input: string): PhoneCheck {
  const parsed = parsePhoneNumberFromString(input);
  if (!E164_FORM.test(input) || (parsed?.isValid() && parsed.number !== input)) {
    const hint = parsed?.isValid() ? `; did you mean ${parsed.number}?` : "";
    return { ok: false, message: `must be an E.164 number such as +31612345678${hint}` };
  }
  if (!parsed?.isValid()) return { ok: false, message: "is not a valid phone number for its country code" };
  return { ok: true, e164: parsed.number };
}

/** The E.164 form of a number, or null when it is not a valid one. */
export function toE164(input: string): string | null {
  const r = checkE164(input);
  return r.ok ? r.e164 : null;
}
