import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { hashSecret } from "../../cloud/auth/secrets.ts";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { readManifest } from "../../cloud/manifest/load-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { staffRepository } from "../../cloud/staff/staff-repository.ts";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { OP_A, OP_B } from "../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const CHEAP = { ln: 10, r: 8, p: 1 };

describe("staff in the site manifest", () => {
  let store: TestDb;
  let hash: string;
  const clock = new FakeClock();
  const env = { ANN_PASSWORD: "ann's password" };
  const manifest = (over: { annRole?: string; annEnv?: string } = {}) =>
    SiteManifest.parse({
      version: 1,
      superadmins: [{ email: "root@example.com", role: "admin", password_hash: hash }],
      operators: [
        {
          id: OP_A,
          name: "A",
          staff: [
            {
              email: "Ann@example.com",
              role: over.annRole ?? "operator",
              password_env: over.annEnv ?? "ANN_PASSWORD",
            },
          ],
        },
        { id: OP_B, name: "B", staff: [{ email: "bob@example.com", role: "viewer", password_hash: hash }] },
      ],
    });

  beforeAll(async () => {
    hash = await hashSecret("hashed password", CHEAP);
  });
  beforeEach(async () => {
    store = await openTestDb();
  });
  afterEach(() => store.drop());

  const staffOf = () => staffRepository(store.db).list();
  const signsIn = (email: string, password: string) =>
    createStaffService({ db: store.db, clock }).authenticate(email, password);

  it("creates each operator's staff and the superadmins, with only password hashes stored", async () => {
    await applyManifest(store.db, manifest(), clock, env);
    const stored = await staffOf();
    expect(stored.map((s) => [s.email, s.role, s.operatorId])).toEqual([
      ["Ann@example.com", "operator", OP_A],
      ["bob@example.com", "viewer", OP_B],
      ["root@example.com", "admin", null],
    ]);
    expect(stored[0]?.passwordHash).toMatch(/^scrypt\$/);
    expect(stored[0]?.passwordHash).not.toContain("ann's password");
    expect(stored[1]?.passwordHash).toBe(hash);
    expect(await signsIn("ann@example.com", "ann's password")).not.toBeNull();
    expect(await signsIn("root@example.com", "hashed password")).not.toBeNull();
  });

  it("writes nothing when applied again unchanged, and updates a changed role or password", async () => {
    await applyManifest(store.db, manifest(), clock, env);
    const before = await staffOf();
    expect(await applyManifest(store.db, manifest(), clock, env)).toEqual({ created: 0, updated: 0 });
    expect(await staffOf()).toEqual(before);
    const changed = await applyManifest(store.db, manifest({ annRole: "admin", annEnv: "NEW_PW" }), clock, {
      NEW_PW: "ann's new password",
    });
    expect(changed).toEqual({ created: 0, updated: 1 });
    const ann = (await staffOf())[0];
    expect(ann?.role).toBe("admin");
    expect(ann?.id).toBe(before[0]?.id);
    expect(await signsIn("ann@example.com", "ann's password")).toBeNull();
    expect(await signsIn("ann@example.com", "ann's new password")).not.toBeNull();
  });

  it("never enables again an account disabled with the operator CLI", async () => {
    await applyManifest(store.db, manifest(), clock, env);
    await createStaffService({ db: store.db, clock }).disable("bob@example.com");
    await applyManifest(store.db, manifest(), clock, env);
    expect((await staffOf())[1]?.disabledAt).not.toBeNull();
  });
});

describe("staff problems in the site manifest", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "manifest-staff-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const problemsOf = (yaml: string, env?: Record<string, string>) => {
    const file = path.join(dir, "site.yaml");
    writeFileSync(file, yaml);
    return readManifest(file, { env }).problems.map((p) => `${p.line}: ${p.where}: ${p.key}: ${p.message}`);
  };

  it("names a staff member without exactly one of password_env and password_hash, a bad role, an unknown key", () => {
    const yaml = `version: 1
superadmins:
  - email: root@example.com
    role: admin
operators:
  - id: ${OP_A}
    name: A
    staff:
      - email: ann@example.com
        role: operator
        password_env: ANN_PASSWORD
        password_hash: scrypt$abc$def
      - email: bob@example.com
        role: boss
        pasword_env: BOB_PASSWORD
`;
    expect(problemsOf(yaml)).toEqual([
      '3: superadmin "root@example.com": : give exactly one of password_env or password_hash',
      '9: staff "ann@example.com": : give exactly one of password_env or password_hash',
      '14: staff "bob@example.com": role: "boss" is not one of viewer, operator, admin',
      '15: staff "bob@example.com": pasword_env: unknown key (did you mean "password_env"?)',
    ]);
  });

  it("names a staff email used twice in any case, and a password_env variable not set", () => {
    const yaml = `version: 1
superadmins:
  - { email: Ann@Example.com, role: admin, password_env: ROOT_PASSWORD }
operators:
  - id: ${OP_A}
    name: A
    staff:
      - { email: ann@example.com, role: viewer, password_env: ANN_PASSWORD }
`;
    expect(problemsOf(yaml, { ROOT_PASSWORD: "set" })).toEqual([
      '8: staff "ann@example.com": email: duplicate staff email "ann@example.com" (first at superadmin "Ann@Example.com", line 3)',
      '8: staff "ann@example.com": password_env: environment variable ANN_PASSWORD is not set (apply reads the password from it)',
    ]);
  });
});
