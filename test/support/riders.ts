import { randomBytes } from "node:crypto";
import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import { applyManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { riderId } from "../../cloud/users/declare-riders.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { type CloudHarness, ISSUER, TOKEN_SECRET } from "./cloud-harness.ts";
import { OP_A, OP_B } from "./fixture-site.ts";

const NAMES: Record<string, string> = { [OP_A]: "Operator A", [OP_B]: "Operator B" };

/** The fixture operators' callback signing secret, unless a test declares another. */
export const CALLBACK_SECRET = `whsec_${randomBytes(32).toString("base64")}`;

/**
 * Gives a fixture operator verification callbacks and riders, through the site manifest as a service
 * operator would (apply never deletes, so the rest of the fixture stays).
 */
export async function declareExternalUsers(
  h: CloudHarness,
  o: {
    operatorId: string;
    signUpUrl?: string;
    signInUrl?: string;
    /** A base URL: `<base>/sign-up` and `<base>/sign-in`. */
    base?: string;
    allowPrivateAddresses?: boolean;
    /** The signing secret (CALLBACK_SECRET by default) and, during a rotation, the previous one. */
    secret?: string;
    previousSecret?: string;
    riders?: { user_id: string; service_user_id?: string; phone_number?: string }[];
    /**
     * Store the addresses without the manifest's address check, as a store written before addresses were
     * checked at registration holds them: only the check at every call stands between them and a callback.
     */
    uncheckedAddresses?: boolean;
  },
): Promise<void> {
  const signUp = o.signUpUrl ?? (o.base ? `${o.base}/sign-up` : undefined);
  const signIn = o.signInUrl ?? (o.base ? `${o.base}/sign-in` : undefined);
  const allowPrivate = o.allowPrivateAddresses ?? true;
  const manifest = SiteManifest.parse({
    version: 1,
    operators: [
      {
        id: o.operatorId,
        name: NAMES[o.operatorId] ?? "Operator",
        ...(signUp && signIn
          ? {
              external_users: {
                sign_up_url: signUp,
                sign_in_url: signIn,
                allow_private_addresses: allowPrivate || o.uncheckedAddresses === true,
                secret: o.secret ?? CALLBACK_SECRET,
                ...(o.previousSecret ? { previous_secret: o.previousSecret } : {}),
              },
            }
          : {}),
        riders: o.riders ?? [],
      },
    ],
  });
  if (o.uncheckedAddresses)
    for (const op of manifest.operators)
      if (op.external_users) op.external_users.allow_private_addresses = allowPrivate;
  await applyManifest(h.db, manifest, h.clock);
}

/**
 * A rider of a fixture operator and an access token for them, minted the way sign-in mints it (for
 * suites that need a rider but not the sign-in round trip).
 */
export async function riderToken(
  h: CloudHarness,
  operatorId: string,
  userId: string,
): Promise<{ serviceUserId: string; token: string }> {
  await declareExternalUsers(h, { operatorId, riders: [{ user_id: userId }] });
  const rider = await userRepository(h.db).findByUserId(operatorId, userId);
  if (!rider) throw new Error(`rider ${userId} of ${operatorId} was not declared`);
  const tokens = createTokenIssuer({ secret: TOKEN_SECRET, issuer: ISSUER, clock: h.clock });
  return { serviceUserId: rider.id, token: await tokens.issueUser({ id: rider.id, operatorId }) };
}

/** The service_user_id the manifest gives a rider declared without one. */
export const manifestRiderId = (operatorId: string, userId: string) => riderId(derivedId, operatorId, userId);
