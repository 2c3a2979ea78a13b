import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { findProblems } from "../../cloud/manifest/manifest-problems.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { userRepository } from "../../cloud/users/user-repository.ts";
import { type CloudHarness, startCloudHarness } from "../support/cloud-harness.ts";
import { OP_A, OP_B } from "../support/fixture-site.ts";
import { manifestRiderId } from "../support/riders.ts";

const ANN = "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f01";
const SECRET = `whsec_${Buffer.alloc(32, 1).toString("base64")}`;
const NEXT_SECRET = `whsec_${Buffer.alloc(32, 2).toString("base64")}`;

function manifest(op: Record<string, unknown>) {
  return { version: 1, operators: [{ id: OP_A, name: "Operator A", ...op }] };
}

describe("the site manifest's external users and riders", () => {
  let h: CloudHarness;
  beforeAll(async () => {
    h = await startCloudHarness();
  });
  afterAll(() => h.close());

  const apply = (m: unknown) => applyManifest(h.db, SiteManifest.parse(m), h.clock);
  /** The operator's riders among those the tests name, by user_id. */
  const riders = async () => {
    const users = userRepository(h.db);
    const found = await Promise.all(["ann", "bob", "cid"].map((u) => users.findByUserId(OP_A, u)));
    return found.filter((u) => u !== undefined);
  };

  it("creates the callbacks and riders once; re-applying writes nothing", async () => {
    const m = manifest({
      external_users: {
        sign_up_url: "https://verify.example/up",
        sign_in_url: "https://verify.example/in",
        secret: SECRET,
      },
      riders: [
        { user_id: "ann", service_user_id: ANN.toUpperCase(), phone_number: "+31612345678" },
        { user_id: "bob" },
      ],
    });
    expect(await apply(m)).toEqual({ created: 3, updated: 0 });
    expect(await apply(m)).toEqual({ created: 0, updated: 0 });
    expect((await riders()).map((r) => [r.userId, r.id, r.phoneNumber])).toEqual([
      ["ann", ANN, "+31612345678"],
      ["bob", manifestRiderId(OP_A, "bob"), null],
    ]);
    expect(manifestRiderId(OP_A, "bob")).toBe(derivedId(OP_A, "rider", "bob"));
    expect(await userRepository(h.db).callbacksOf(OP_A)).toEqual({
      operatorId: OP_A,
      signUpUrl: "https://verify.example/up",
      signInUrl: "https://verify.example/in",
      allowPrivateAddresses: false,
      secrets: [SECRET],
    });
    expect(await userRepository(h.db).callbacksOf(OP_B)).toBeUndefined();
  });

  it("updates what changed, keeps what a manifest without the block leaves out, and never deletes", async () => {
    const changed = manifest({
      external_users: {
        sign_up_url: "https://verify.example/up2",
        sign_in_url: "https://verify.example/in",
        allow_private_addresses: true,
        // A rotation: both sign until the previous one is left out.
        secret: NEXT_SECRET,
        previous_secret: SECRET,
      },
      riders: [{ user_id: "ann", phone_number: "+31687654321" }],
    });
    expect(await apply(changed)).toEqual({ created: 0, updated: 2 });
    expect(await apply(manifest({}))).toEqual({ created: 0, updated: 0 });
    expect((await riders()).map((r) => [r.userId, r.phoneNumber])).toEqual([
      ["ann", "+31687654321"],
      ["bob", null],
    ]);
    expect(await userRepository(h.db).callbacksOf(OP_A)).toMatchObject({
      signUpUrl: "https://verify.example/up2",
      allowPrivateAddresses: true,
      secrets: [NEXT_SECRET, SECRET],
    });
  });

  it("refuses to give an existing rider another service_user_id, or to reuse one", async () => {
    await expect(apply(manifest({ riders: [{ user_id: "ann", service_user_id: OP_B }] }))).rejects.toThrow(
      `rider ann: already exists with service_user_id ${ANN}`,
    );
    await expect(apply(manifest({ riders: [{ user_id: "cid", service_user_id: ANN }] }))).rejects.toThrow(
      `rider cid: service_user_id ${ANN} belongs to another user`,
    );
    expect((await riders()).map((r) => r.userId)).toEqual(["ann", "bob"]);
  });

  it("reports misspelt keys, duplicates, bad phone numbers and insecure URLs in the manifest's words", () => {
    const { problems } = findProblems(
      manifest({
        external_users: {
          sign_up_url: "http://verify.example/up",
          sign_in_url: "https://user:pw@verify.example/in",
          alow_private_addresses: true,
        },
        riders: [
          { user_id: "ann", servce_user_id: ANN },
          { user_id: "ann", phone_number: "0612345678" },
          { user_id: "bob", service_user_id: ANN },
          { user_id: "cid", service_user_id: ANN },
        ],
      }),
    );
    const text = problems.map((p) => `${p.path.join(".")}: ${p.message}`).join("\n");
    expect(text).toContain(
      'external_users.alow_private_addresses: unknown key (did you mean "allow_private_addresses"?)',
    );
    expect(text).toContain('riders.0.servce_user_id: unknown key (did you mean "service_user_id"?)');
    expect(text).toContain('riders.1.user_id: duplicate rider user_id "ann" in this operator');
    expect(text).toContain("riders.1.phone_number: must be an E.164 number such as +31612345678");
    expect(text).toContain(`riders.3.service_user_id: duplicate service_user_id "${ANN}"`);
    expect(text).toContain("external_users.sign_in_url: must not hold credentials");
  });

  it("needs exactly one signing secret, a Standard Webhooks one, and names an unset secret_env", () => {
    const urls = { sign_up_url: "https://verify.example/up", sign_in_url: "https://verify.example/in" };
    const problemsOf = (external_users: Record<string, unknown>, env?: Record<string, string>) =>
      findProblems(manifest({ external_users }), env).problems.map(
        (p) => `${p.path.join(".")}: ${p.message}`,
      );
    expect(problemsOf(urls)).toContain(
      "operators.0.external_users.secret: give exactly one of secret or secret_env",
    );
    expect(problemsOf({ ...urls, secret: SECRET, secret_env: "VERIFY_SECRET" })).toContain(
      "operators.0.external_users.secret: give exactly one of secret or secret_env",
    );
    expect(problemsOf({ ...urls, secret: "hunter2" })).toContain(
      "operators.0.external_users.secret: must start with whsec_ (a Standard Webhooks secret)",
    );
    expect(
      problemsOf({ ...urls, secret_env: "VERIFY_SECRET", previous_secret_env: "VERIFY_SECRET_OLD" }, {}),
    ).toEqual([
      "operators.0.external_users.secret_env: environment variable VERIFY_SECRET is not set (apply reads the secret from it)",
      "operators.0.external_users.previous_secret_env: environment variable VERIFY_SECRET_OLD is not set (apply reads the secret from it)",
    ]);
    expect(problemsOf({ ...urls, secret_env: "VERIFY_SECRET" }, { VERIFY_SECRET: SECRET })).toEqual([]);
  });

  it("refuses plain http unless private addresses are allowed", () => {
    const { problems } = findProblems(
      manifest({
        external_users: {
          sign_up_url: "http://verify.example/up",
          sign_in_url: "https://verify.example/in",
          secret: SECRET,
        },
      }),
    );
    expect(problems.map((p) => `${p.path.join(".")}: ${p.message}`)).toContain(
      "operators.0.external_users.sign_up_url: must be https unless allow_private_addresses is true",
    );
  });

  it.each([
    "https://LOCALHOST./up",
    "https://[::127.0.0.1]/up",
    "https://[::ffff:7f00:1]/up",
    "https://2130706433/up",
    "https://10.0.0.5:6379/up",
    "https://169.254.169.254/up",
  ])(
    "refuses %s, a callback address that is not public however spelt, unless private ones are allowed",
    (url) => {
      const at = (allow: boolean) =>
        findProblems(
          manifest({
            external_users: {
              sign_up_url: url,
              sign_in_url: "https://verify.example/in",
              secret: SECRET,
              allow_private_addresses: allow,
            },
          }),
        ).problems.map((p) => `${p.path.join(".")}: ${p.message}`);
      expect(at(false).join("\n")).toMatch(
        /^operators\.0\.external_users\.sign_up_url: .* (is not a public address|is a local name, not a public address) \(set allow_private_addresses: true to allow it\)$/m,
      );
      expect(at(true)).toEqual([]);
    },
  );
});
