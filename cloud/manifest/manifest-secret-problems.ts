import { arr, isObj, type ManifestPath, type RawProblem, str } from "./manifest-paths.ts";

type Env = Record<string, string | undefined>;

/**
 * What apply needs from the environment: every `secret_env` (and `previous_secret_env`) variable set, and
 * every staff member's `password_env`.
 */
export function missingSecrets(data: unknown, env: Env): RawProblem[] {
  const out: RawProblem[] = [];
  const password = (o: unknown, path: ManifestPath) => {
    const name = isObj(o) ? str(o.password_env) : null;
    if (name && !env[name])
      out.push({
        path: [...path, "password_env"],
        message: `environment variable ${name} is not set (apply reads the password from it)`,
      });
  };
  const check = (o: unknown, path: ManifestPath) => {
    if (!isObj(o)) return;
    const name = str(o.secret_env);
    if (name && !env[name])
      out.push({
        path: [...path, "secret_env"],
        message: `environment variable ${name} is not set (apply reads the secret from it)`,
      });
  };
  if (!isObj(data)) return out;
  arr(data.superadmins).forEach((s, i) => {
    password(s, ["superadmins", i]);
  });
  arr(data.operators).forEach((op, i) => {
    if (!isObj(op)) return;
    arr(op.staff).forEach((s, j) => {
      password(s, ["operators", i, "staff", j]);
    });
    arr(op.clients).forEach((c, j) => {
      check(c, ["operators", i, "clients", j]);
    });
    // Signing secrets: the current one and, during a rotation, the previous one.
    const signing = (o: unknown, path: ManifestPath) => {
      check(o, path);
      const previous = isObj(o) ? str(o.previous_secret_env) : null;
      if (previous && !env[previous])
        out.push({
          path: [...path, "previous_secret_env"],
          message: `environment variable ${previous} is not set (apply reads the secret from it)`,
        });
    };
    arr(op.webhooks).forEach((w, j) => {
      signing(w, ["operators", i, "webhooks", j]);
    });
    signing(op.external_users, ["operators", i, "external_users"]);
    arr(op.locations).forEach((loc, j) => {
      if (!isObj(loc)) return;
      arr(loc.gateways).forEach((gw, k) => {
        check(gw, ["operators", i, "locations", j, "gateways", k]);
      });
    });
  });
  return out;
}
