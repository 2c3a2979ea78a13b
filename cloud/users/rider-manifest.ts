import { z } from "zod";
import { checkE164 } from "../../shared/api/phone-number.ts";
import { Uuid } from "../../shared/api/uuid.ts";
import { hostRefusal } from "../outbound/callback-address.ts";
import { checkSigningSecrets, SigningSecretFields } from "../webhooks/signing-secrets.ts";

/** The site manifest's parts about external users: an operator's callback addresses and its riders. */

const CallbackUrl = z
  .string()
  .max(2048)
  .superRefine((s, ctx) => {
    let url: URL;
    try {
      url = new URL(s);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be an absolute http(s) URL" });
      return;
    }
    if (url.protocol !== "https:" && url.protocol !== "http:")
      ctx.addIssue({ code: "custom", message: "must be an http(s) URL" });
    if (url.username || url.password)
      ctx.addIssue({ code: "custom", message: "must not hold credentials (user:password@)" });
    if (url.hash) ctx.addIssue({ code: "custom", message: "must not hold a #fragment" });
  });

export const ExternalUsersFields = z.strictObject({
  sign_up_url: CallbackUrl.describe("The operator's sign-up verification endpoint (POSTed JSON)"),
  sign_in_url: CallbackUrl.describe("The operator's sign-in verification endpoint (POSTed JSON)"),
  allow_private_addresses: z
    .boolean()
    .default(false)
    .describe(
      "Let the callbacks reach loopback, private and link-local addresses and use plain http (local demos, tests)",
    ),
  // Both callbacks carry Standard Webhooks signatures under these (docs/verification-callbacks.md).
  ...SigningSecretFields,
});

/**
 * Plain http carries challenge tokens in the clear: only on a network the operator vouches for. Without
 * that, an address that is not public however spelt (`https://LOCALHOST.`, `https://[::127.0.0.1]`) is
 * refused here already, as for webhooks; names are checked again at every call (cloud/outbound/callback-address.ts).
 */
export const ExternalUsers = ExternalUsersFields.superRefine((e, ctx) => {
  checkSigningSecrets(e, ctx);
  if (e.allow_private_addresses) return;
  for (const key of ["sign_up_url", "sign_in_url"] as const) {
    if (e[key].startsWith("http:"))
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: "must be https unless allow_private_addresses is true",
      });
    const refused = URL.canParse(e[key]) ? hostRefusal(new URL(e[key])) : null;
    if (refused)
      ctx.addIssue({
        code: "custom",
        path: [key],
        message: `${refused} (set allow_private_addresses: true to allow it)`,
      });
  }
});

const PhoneNumber = z.string().superRefine((s, ctx) => {
  const r = checkE164(s);
  if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
});

/** A rider known in advance (demo riders, test riders): an external user created without a sign-up. */
export const Rider = z.strictObject({
  user_id: z.string().min(1).max(255).describe("The integrator's own id of the rider"),
  service_user_id: Uuid.optional().describe(
    "The rider's service_user_id; derived from the operator and user_id when omitted",
  ),
  phone_number: PhoneNumber.optional().describe("E.164, for access-list invites"),
});
