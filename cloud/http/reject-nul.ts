import type { FastifyInstance } from "fastify";
import { AppError } from "../../shared/api/errors.ts";

declare module "fastify" {
  interface FastifyContextConfig {
    /** The route reads its raw input and words its own errors (the token endpoint's RFC 6749 form). */
    ownInput?: boolean;
  }
}

type Step = { value: unknown; key: string; parent: Step | null };

function pathOf(step: Step): string {
  const keys: string[] = [];
  for (let s: Step | null = step; s; s = s.parent) keys.push(s.key);
  return keys.reverse().join(".");
}

/**
 * Where the first string or object key holding U+0000 is ("body.label"), or null. Walks with an explicit
 * stack and builds the path only for a hit: a body may be nested thousands deep.
 */
export function findNul(root: unknown, context: string): string | null {
  const work: Step[] = [{ value: root, key: context, parent: null }];
  for (let step = work.pop(); step !== undefined; step = work.pop()) {
    const v = step.value;
    if (typeof v === "string") {
      if (v.includes("\u0000")) return pathOf(step);
    } else if (typeof v === "object" && v !== null) {
      for (const [key, value] of Object.entries(v)) {
        const child = { value, key, parent: step };
        if (key.includes("\u0000")) return pathOf(child);
        work.push(child);
      }
    }
  }
  return null;
}

/**
 * Refuses U+0000 in path parameters, query and JSON body with 400 VALIDATION_FAILED. PostgreSQL cannot
 * hold it in text (it answered "invalid byte sequence" and the request a 500), and SQLite stored it: no
 * field of this API has a use for it, so both stores now answer alike (docs/decisions/http.md).
 */
export function installNulGuard(app: FastifyInstance) {
  app.addHook("preValidation", (request, _reply, done) => {
    // An unknown route answers 404 whatever its path holds.
    if (request.is404 || request.routeOptions.config.ownInput) return done();
    const at =
      findNul(request.params, "params") ??
      findNul(request.query, "querystring") ??
      findNul(request.body, "body");
    if (at === null) return done();
    done(new AppError("ERRORS.VALIDATION_FAILED", `${at}: must not contain U+0000 (NUL)`, { fields: [at] }));
  });
}
