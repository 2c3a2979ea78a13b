import { z } from "zod";
import { MEMBERSHIP_STATUSES, PAYMENT_PERIODS } from "../domain/membership.ts";
import { checkE164 } from "./phone-number.ts";
import { Uuid } from "./uuid.ts";

/** E.164, checked against the numbering plan of its country (shared/api/phone-number.ts). */
export const PhoneNumber = z
  .string()
  .max(32)
  .superRefine((s, ctx) => {
    const r = checkE164(s);
    if (!r.ok) ctx.addIssue({ code: "custom", message: r.message });
  })
  .describe("E.164, e.g. +31612345678");

/** The member resource (spec: Access-list member); the payment fields appear on paid lists only. */
export const AccessListMember = z
  .object({
    user_id: z.string().describe("empty for invited members who have not joined"),
    phone_number: z.string().describe("E.164; empty for members who already joined"),
    status: z.enum(MEMBERSHIP_STATUSES),
    joined_at: z.string().describe("RFC 3339; empty if not joined"),
    expires_at: z.string().describe("RFC 3339; the invite expiry for invited members; empty if none"),
    payment_period: z.enum(PAYMENT_PERIODS).optional().describe("paid lists only"),
    recurring_payment: z.boolean().optional().describe("paid lists only"),
    next_payment_at: z.string().optional().describe("RFC 3339, empty if none; paid lists only"),
    comment: z.string(),
    external_id: z.string().describe("as supplied when the member was added; empty if none"),
  })
  .meta({ id: "AccessListMember" });
export type AccessListMember = z.infer<typeof AccessListMember>;

export const AccessListMemberList = z.object({ data: z.array(AccessListMember), uri: z.string() });
export type AccessListMemberList = z.infer<typeof AccessListMemberList>;

const exactlyOne = (b: { user_id?: string; phone_number?: string }) =>
  (b.user_id === undefined) !== (b.phone_number === undefined);
const EXACTLY_ONE = { message: "give exactly one of user_id and phone_number", path: ["user_id"] };

export const AddAccessListMember = z
  .strictObject({
    user_id: Uuid.optional().describe("service_user_id of a signed-up user"),
    phone_number: PhoneNumber.optional().describe(
      "E.164; a number no user has yet becomes an invite applied at that person's next sign-in",
    ),
    payment_period: z.enum(PAYMENT_PERIODS).optional().describe("paid lists only; default month"),
    recurring_payment: z.boolean().optional().describe("paid lists only; default true"),
    comment: z.string().max(1000).optional(),
    external_id: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .describe("opaque; cannot be changed once the member was added"),
  })
  .refine(exactlyOne, EXACTLY_ONE)
  .meta({ id: "AddAccessListMember" });
export type AddAccessListMember = z.infer<typeof AddAccessListMember>;

export const RemoveAccessListMember = z
  .strictObject({
    user_id: Uuid.optional(),
    phone_number: PhoneNumber.optional(),
    remove_now: z
      .boolean()
      .optional()
      .describe("paid lists: true ends access at once; default false, at the end of the current period"),
  })
  .refine(exactlyOne, EXACTLY_ONE)
  .meta({ id: "RemoveAccessListMember" });
export type RemoveAccessListMember = z.infer<typeof RemoveAccessListMember>;
