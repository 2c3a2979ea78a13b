import { createTokenIssuer } from "../../cloud/auth/tokens.ts";
import type { Permission } from "../../shared/api/permissions.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { ISSUER, TOKEN_SECRET } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { SECRET } from "../support/fixture-site.ts";
import type { Credential } from "./fuzz-request.ts";
import { encodeComponent } from "./request-arbitrary.ts";

export type ClientRow = { client_id: string; operator_id: string; permissions: string };

const FOREIGN_SECRET = new TextEncoder().encode("a-key-the-service-has-never-seen-32b!");

/**
 * Turns a generated credential into an Authorization header at send time. Tokens are signed as the
 * service signs them (its test secret and issuer), at the fake clock's now, so they are always fresh; an
 * expired one was issued two hours earlier; forgeries use `alg: none` or a key the service does not know.
 */
export function createAuthorizer(clients: ClientRow[], clock: Clock) {
  const issueAt = (at: Date, secret: Uint8Array, c: ClientRow) =>
    createTokenIssuer({ secret, issuer: ISSUER, clock: new FakeClock(at) }).issue({
      id: c.client_id,
      operatorId: c.operator_id,
      permissions: JSON.parse(c.permissions) as Permission[],
    });

  return async function authorization(cred: Credential): Promise<string | undefined> {
    if (cred.kind === "none") return undefined;
    if (cred.kind === "raw") return cred.value;
    const client = clients.find((c) => c.client_id === cred.client);
    if (!client) throw new Error(`no client ${cred.client} in the store`);
    const now = clock.now();
    const basic = (secret: string) =>
      `Basic ${Buffer.from(`${encodeComponent(client.client_id)}:${encodeComponent(secret)}`).toString("base64")}`;
    switch (cred.kind) {
      case "token":
        return `Bearer ${await issueAt(now, TOKEN_SECRET, client)}`;
      case "expired-token":
        return `Bearer ${await issueAt(new Date(now.getTime() - 2 * 3_600_000), TOKEN_SECRET, client)}`;
      case "foreign-key":
        return `Bearer ${await issueAt(now, FOREIGN_SECRET, client)}`;
      case "alg-none": {
        const [, payload] = (await issueAt(now, TOKEN_SECRET, client)).split(".");
        const header = Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url");
        return `Bearer ${header}.${payload}.`;
      }
      case "basic":
        return basic(SECRET);
      case "basic-wrong-secret":
        return basic(`${SECRET}-wrong`);
    }
  };
}
