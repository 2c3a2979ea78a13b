import { z } from "zod";

/**
 * The site manifest's signing secrets, shared by webhook endpoints and the verification callbacks of
 * external users: `secret` or `secret_env`, and during a rotation `previous_secret` or
 * `previous_secret_env`. Everything signed carries a Standard Webhooks signature under each.
 */

type Env = Record<string, string | undefined>;

/**
 * Standard Webhooks secrets: `whsec_` and the base64 of 24 to 64 random bytes (the specification's
 * recommended range), so any of its libraries can verify with the same string.
 */
export function whsecProblem(s: string): string | null {
  if (!s.startsWith("whsec_")) return "must start with whsec_ (a Standard Webhooks secret)";
  const b64 = s.slice("whsec_".length);
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0)
    return "must be whsec_ followed by base64 (A–Z, a–z, 0–9, +, /, = padding)";
  const bytes = Buffer.from(b64, "base64").length;
  if (bytes < 24 || bytes > 64) return `must hold 24 to 64 bytes after whsec_ (it holds ${bytes})`;
  return null;
}

const WhsecSecret = z.string().superRefine((s, ctx) => {
  const problem = whsecProblem(s);
  if (problem) ctx.addIssue({ code: "custom", message: problem });
});

const EnvName = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, "an environment variable name (A–Z, 0–9, _)");

/** The four keys, to spread into a manifest object's strict schema. */
export const SigningSecretFields = {
  secret: WhsecSecret.optional().describe("Signing secret, whsec_ + base64 (demos; prefer secret_env)"),
  secret_env: EnvName.optional().describe("Environment variable holding the signing secret, read at apply"),
  previous_secret: WhsecSecret.optional().describe(
    "During a rotation: the secret being replaced; messages carry a signature under each",
  ),
  previous_secret_env: EnvName.optional().describe("previous_secret, read from the environment at apply"),
};

export type SigningSecretKeys = {
  secret?: string;
  secret_env?: string;
  previous_secret?: string;
  previous_secret_env?: string;
};

/** Exactly one current secret, at most one previous one. */
export function checkSigningSecrets(s: SigningSecretKeys, ctx: z.RefinementCtx): void {
  if ((s.secret === undefined) === (s.secret_env === undefined))
    ctx.addIssue({ code: "custom", path: ["secret"], message: "give exactly one of secret or secret_env" });
  if (s.previous_secret !== undefined && s.previous_secret_env !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["previous_secret"],
      message: "give at most one of previous_secret or previous_secret_env",
    });
}

function secretOf(
  s: SigningSecretKeys,
  key: "secret" | "previous_secret",
  env: Env,
  where: string,
): string | undefined {
  const envKey = `${key}_env` as const;
  const name = s[envKey];
  if (name === undefined) return s[key];
  const value = env[name];
  if (!value) throw new Error(`${where}: ${envKey}: environment variable ${name} is not set`);
  const problem = whsecProblem(value);
  if (problem) throw new Error(`${where}: ${envKey}: ${name} ${problem}`);
  return value;
}

/**
 * The secrets that sign, newest first: the current one, and the previous one during a rotation (unless it
 * is the same). `where` names the manifest object in errors (`webhook <id>`).
 */
export function signingSecrets(s: SigningSecretKeys, env: Env, where: string): string[] {
  const current = secretOf(s, "secret", env, where);
  if (current === undefined) throw new Error(`${where}: no signing secret`);
  const previous = secretOf(s, "previous_secret", env, where);
  return previous && previous !== current ? [current, previous] : [current];
}
