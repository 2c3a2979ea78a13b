import type { SiteManifest } from "../cloud/manifest/manifest-schema.ts";

/** The demo operator's console staff: one who acts, one who only reads. */
export const DEMO_STAFF = [
  { email: "operator@demo.example", role: "operator" },
  { email: "viewer@demo.example", role: "viewer" },
] as const;

/**
 * Declares the demo staff for the manifest's first operator, their password read from
 * DEMO_CONSOLE_PASSWORD by apply like any `password_env` (the demo's settings give it its default).
 */
export function declareDemoStaff(manifest: SiteManifest): void {
  const op = manifest.operators[0];
  if (!op) return;
  for (const s of DEMO_STAFF)
    if (!op.staff.some((known) => known.email.toLowerCase() === s.email))
      op.staff.push({ email: s.email, role: s.role, password_env: "DEMO_CONSOLE_PASSWORD" });
}

/** The banner's lines on the operator console: its address, the accounts and their password. */
export function staffBannerLines(base: string, password: string): string[] {
  return [
    `  Operator console  ${base}/console/`,
    `    sign in as ${DEMO_STAFF.map((s) => `${s.email} (${s.role})`).join(" or ")}`,
    `    password ${password} (DEMO_CONSOLE_PASSWORD)`,
    `    the simulated hardware, played from the page: ${base}/console/demo`,
  ];
}
