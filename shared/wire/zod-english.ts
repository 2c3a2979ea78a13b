/**
 * English error messages for the schemas written against `zod/mini` (the wire's, the gateway's config and
 * control socket): zod/mini has no default locale and would say only "Invalid input". Classic zod sets the
 * same English locale on its first schema; this sets it unless a locale was chosen already.
 *
 * The daemon's schemas are `zod/mini` (functions in place of methods: `z.optional(s)`,
 * `s.check(z.maxLength(n))`; the same zod, the same parsing), so the daemon never loads classic zod, whose
 * module and method-laden schemas cost a controller resident memory (docs/decisions/gateway-memory.md).
 * The cloud takes these schemas as any other (classic `z.object({ x: mini })`, `.parse`, `.safeParse`).
 */
import { config } from "zod/mini";
import { globalConfig } from "zod/v4/core";
import en from "zod/v4/locales/en.js";

if (!globalConfig.localeError) config(en());
