import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { applyManifest, checkManifest, derivedId } from "../../cloud/manifest/apply-manifest.ts";
import { loadManifest, readManifest } from "../../cloud/manifest/load-manifest.ts";
import { formatProblem } from "../../cloud/manifest/manifest-problems.ts";
import { manifestJsonSchema, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { fixtureSecretHash } from "../support/cloud-harness.ts";
import { FakeClock } from "../support/fake-clock.ts";
import { fixtureManifest, fx, OP_A } from "../support/fixture-site.ts";
import { openTestDb, type TestDb } from "../support/test-db.ts";

const root = path.resolve(import.meta.dirname, "../..");
const DEMO = path.join(root, "manifests/demo-site.yaml");
const env = { DEMO_CLIENT_SECRET: "demo-secret-1", DEMO_GATEWAY_SECRET: "demo-gateway-secret" };

async function snapshot(store: TestDb) {
  const db = store.db;
  return {
    operators: await db.selectFrom("operators").selectAll().orderBy("id").execute(),
    clients: await db.selectFrom("api_clients").selectAll().orderBy("client_id").execute(),
    locations: await db.selectFrom("locations").selectAll().orderBy("id").execute(),
    gateways: await db.selectFrom("gateways").selectAll().orderBy("id").execute(),
    devices: await db.selectFrom("devices").selectAll().orderBy("id").execute(),
    areas: await db.selectFrom("public_area_locations").selectAll().orderBy("location_id").execute(),
  };
}

describe("the site manifest", () => {
  let store: TestDb;
  const clock = new FakeClock();
  beforeEach(async () => {
    store = await openTestDb();
  });
  afterEach(() => store.drop());

  it("applies the demo site with every location type and a public area", async () => {
    const summary = await applyManifest(store.db, loadManifest(DEMO), clock, env);
    expect(summary.created).toBeGreaterThan(20);
    const types = (await store.db.selectFrom("locations").select("type").execute()).map((r) => r.type).sort();
    expect(types).toEqual(["BIKE_DOCKS", "BIKE_HOUSE", "BIKE_HOUSE_DOCKLESS", "BIKE_LOCKERS"]);
    const area = await store.db
      .selectFrom("public_area_locations")
      .selectAll()
      .where("public_area_id", "=", "demo-city")
      .execute();
    expect(area).toHaveLength(4);
  });

  it("stores secrets only as hashes", async () => {
    await applyManifest(store.db, loadManifest(DEMO), clock, env);
    const clients = await store.db.selectFrom("api_clients").select("secret_hash").execute();
    const gateways = await store.db.selectFrom("gateways").select("secret_hash").execute();
    for (const row of [...clients, ...gateways]) {
      expect(row.secret_hash).toMatch(/^scrypt\$/);
      expect(row.secret_hash).not.toContain("demo-secret-1");
      expect(row.secret_hash).not.toContain("demo-gateway-secret");
    }
  });

  it("stores ids given in upper case in lower case, as the API's paths normalise them", async () => {
    const ids = {
      operator: "ABCDEF00-0000-4000-8000-00000000000A",
      location: "ABCDEF00-0000-4000-8000-00000000000B",
      guard: "ABCDEF00-0000-4000-8000-00000000000C",
      device: "ABCDEF00-0000-4000-8000-00000000000D",
    };
    const manifest = SiteManifest.parse({
      version: 1,
      operators: [
        {
          id: ids.operator,
          name: "Upper",
          locations: [
            {
              id: ids.location,
              code: "U1",
              label: "Upper one",
              type: "BIKE_LOCKERS",
              latitude: 52,
              longitude: 5,
              gateways: [
                {
                  id: "gw-upper",
                  guard_id: ids.guard,
                  secret: "gateway-secret-1",
                  devices: [{ id: ids.device, alias: "1", type: "LOCKER" }],
                },
              ],
            },
          ],
        },
      ],
    });
    await applyManifest(store.db, manifest, clock);
    const devices = await store.db
      .selectFrom("devices")
      .select(["id", "location_id", "operator_id"])
      .execute();
    expect(devices.map((d) => d.id).sort()).toEqual(
      [ids.device.toLowerCase(), ids.guard.toLowerCase()].sort(),
    );
    for (const d of devices) {
      expect(d.location_id).toBe(ids.location.toLowerCase());
      expect(d.operator_id).toBe(ids.operator.toLowerCase());
    }
  });

  it("is idempotent: applying twice changes nothing", async () => {
    const m = loadManifest(DEMO);
    await applyManifest(store.db, m, clock, env);
    const before = await snapshot(store);
    clock.advance(60_000);
    const second = await applyManifest(store.db, m, clock, env);
    expect(second).toEqual({ created: 0, updated: 0 });
    expect(await snapshot(store)).toEqual(before);
  });

  it("keeps a device's runtime state when re-applied", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    await applyManifest(store.db, m, clock);
    const id = fx.device("L1", "1");
    await store.db
      .updateTable("devices")
      .set({ state_value: "LOCKED", user_id: "u1" })
      .where("id", "=", id)
      .execute();
    await applyManifest(store.db, m, clock);
    const row = await store.db
      .selectFrom("devices")
      .selectAll()
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state_value: "LOCKED", user_id: "u1" });
  });

  it("leaves location fields the manifest does not mention as they were", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    await applyManifest(store.db, m, clock);
    const id = fx.location("L1");
    const row = await store.db
      .selectFrom("locations")
      .select("attrs")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    const patched = { ...JSON.parse(row.attrs), city: "Patched City" };
    await store.db
      .updateTable("locations")
      .set({ attrs: JSON.stringify(patched) })
      .where("id", "=", id)
      .execute();
    await applyManifest(store.db, m, clock);
    const after = await store.db
      .selectFrom("locations")
      .select("attrs")
      .where("id", "=", id)
      .executeTakeFirstOrThrow();
    expect(JSON.parse(after.attrs)).toMatchObject({
      city: "Patched City",
      address: "Street 1",
      operator_id: OP_A,
    });
  });

  it("derives stable ids from operator, code and alias", () => {
    expect(fx.location("L1")).toBe(derivedId(OP_A, "location", "L1"));
    expect(derivedId(OP_A, "location", "L1")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("names the path of every schema problem", () => {
    const bad = {
      version: 1,
      operators: [{ id: "not-a-uuid", name: "", locations: [{ code: "X", colour: "red" }] }],
    };
    const res = SiteManifest.safeParse(bad);
    expect(res.success).toBe(false);
    const paths = res.error?.issues.map((i) => i.path.join(".")) ?? [];
    expect(paths).toContain("operators.0.id");
    expect(paths).toContain("operators.0.locations.0");
  });

  it("reports duplicates and dangling references across the manifest", async () => {
    const m = SiteManifest.parse(fixtureManifest(await fixtureSecretHash()));
    const opA = m.operators[0]!;
    opA.locations.push({ ...opA.locations[0]!, gateways: [] });
    opA.public_areas[0]!.locations.push("NOPE");
    const problems = checkManifest(m);
    expect(problems).toContain(
      'operator "Operator A" › location L1: code: duplicate location code "L1" in this operator',
    );
    expect(problems).toContain(
      'operator "Operator A" › public area city-a: locations[2]: no location with code NOPE in this operator',
    );
    await expect(applyManifest(store.db, m, clock)).rejects.toThrow(/duplicate location code "L1"/);
    expect(await store.db.selectFrom("locations").selectAll().execute()).toHaveLength(0);
  });

  it("fails when a secret_env variable is missing, naming it", async () => {
    await expect(applyManifest(store.db, loadManifest(DEMO), clock, {})).rejects.toThrow(
      /client demo-client: secret_env: environment variable DEMO_CLIENT_SECRET is not set/,
    );
  });

  it("publishes a JSON Schema that matches the zod schema", () => {
    const published = JSON.parse(readFileSync(path.join(root, "docs/site-manifest.schema.json"), "utf8"));
    expect(published).toEqual(manifestJsonSchema());
  });
});

/** A manifest with a problem of every kind, each on a line the test knows. */
const BAD_YAML = `version: 1
operators:
  - id: 0b6f1a52-8c4e-4d1f-9a57-5f2d8e0c7a11
    name: Demo City Parking
    clients:
      - client_id: demo-client
        secrte_env: DEMO_CLIENT_SECRET
        permisions: [SUPERADMIN]
    public_areas:
      - id: demo-city
        name: Demo
        locations: [CS-L, CS-X]
    locations:
      - code: CS-L
        label: Central
        type: BIKE_LOCKER
        latitude: 52
        longitude: 4
        atrs: { city: X }
        gateways:
          - id: gw-cs-lockers
            secret_env: UNSET_GATEWAY_SECRET
            devices:
              - { alias: "1", type: LOCKR, bus: { board: 1, chanel: 1 } }
              - { alias: "1", type: LOCKER }
      - code: MS-D
        label: Museum
        type: BIKE_DOCKS
        latitude: 52
        longitude: 4
        gateways:
          - id: gw-cs-lockers
            secret: short
`;

describe("manifest problems, told the way the author wrote the file", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "manifest-problems-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const write = (name: string, text: string) => {
    const file = path.join(dir, name);
    writeFileSync(file, text);
    return file;
  };

  it("reports every problem at once, in file order, with its line, the object's name and 'did you mean'", () => {
    const file = write("bad.yaml", BAD_YAML);
    const report = readManifest(file, { env: {} });
    expect(report.manifest).toBeNull();
    const lines = report.problems.map((p) => formatProblem("bad.yaml", p));
    expect(lines).toEqual([
      "bad.yaml:6: client demo-client: give exactly one of secret, secret_env or secret_hash",
      'bad.yaml:7: client demo-client: secrte_env: unknown key (did you mean "secret_env"?)',
      'bad.yaml:8: client demo-client: permisions: unknown key (did you mean "permissions"?)',
      'bad.yaml:12: public area demo-city: locations[1]: no location with code CS-X in this operator (did you mean "CS-L"?)',
      expect.stringMatching(
        /^bad\.yaml:16: location CS-L: type: "BIKE_LOCKER" is not one of BIKE_DOCKS, .* \(did you mean "BIKE_LOCKERS"\?\)$/,
      ),
      'bad.yaml:19: location CS-L: atrs: unknown key (did you mean "attrs"?)',
      "bad.yaml:22: location CS-L › gateway gw-cs-lockers: secret_env: environment variable UNSET_GATEWAY_SECRET is not set (apply reads the secret from it)",
      'bad.yaml:24: location CS-L › gateway gw-cs-lockers › device "1": bus.chanel: unknown key (did you mean "channel"?)',
      expect.stringMatching(
        /^bad\.yaml:24: location CS-L › gateway gw-cs-lockers › device "1": type: "LOCKR" is not one of .* \(did you mean "LOCKER"\?\)$/,
      ),
      'bad.yaml:24: location CS-L › gateway gw-cs-lockers › device "1": bus.channel: missing (number required)',
      'bad.yaml:25: location CS-L › gateway gw-cs-lockers › device "1": alias: duplicate device alias "1" in this location (first at line 24)',
      'bad.yaml:32: location MS-D › gateway gw-cs-lockers: id: duplicate gateway id "gw-cs-lockers" (first at location CS-L › gateway gw-cs-lockers, line 21)',
      "bad.yaml:33: location MS-D › gateway gw-cs-lockers: secret: too small: expected string to have >=8 characters",
    ]);
  });

  it("names an unknown key without a close match by listing the keys allowed there", () => {
    const file = write("colour.yaml", BAD_YAML.replace("atrs: { city: X }", "colour: red"));
    const problem = readManifest(file).problems.find((p) => p.key === "colour");
    expect(problem).toMatchObject({ line: 19, where: "location CS-L" });
    expect(problem?.message).toMatch(/^unknown key; the keys here are id, code, label, type, /);
  });

  it("gives lines in JSON files too, and reports YAML syntax errors beside the schema's", () => {
    const json = JSON.stringify(parseYaml(BAD_YAML), null, 2);
    const fromJson = readManifest(write("bad.json", json)).problems.find((p) => p.key === "bus.chanel");
    expect(fromJson?.line).toBe(json.split("\n").findIndex((l) => l.includes('"chanel"')) + 1);

    const dup = readManifest(
      write("dup.yaml", BAD_YAML.replace("    name: Demo City Parking\n", "    name: A\n    name: B\n")),
    );
    expect(dup.problems[0]).toMatchObject({
      line: 5,
      message: expect.stringMatching(/^YAML: Map keys must be unique/),
    });
    expect(dup.problems.some((p) => p.key === "permisions")).toBe(true);
  });

  it("is valid with the secret variables set, and checks them only when asked", () => {
    expect(readManifest(DEMO, { env }).problems).toEqual([]);
    expect(readManifest(DEMO).manifest).not.toBeNull();
    const missing = readManifest(DEMO, { env: { DEMO_CLIENT_SECRET: "x" } }).problems;
    expect(missing.map((p) => p.where)).toEqual([
      "location CS-L › gateway gw-cs-lockers",
      "location MS-D › gateway gw-ms-docks",
      "location HB-H › gateway gw-hb-house",
      "location PK-H › gateway gw-pk-house",
    ]);
  });
});

describe("npm run manifest (the CLI)", () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(path.join(tmpdir(), "manifest-cli-"));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** Runs the CLI through tsx with only the environment given; resolves with its exit code and output. */
  function cli(args: string[], extraEnv: Record<string, string> = {}) {
    return new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
      execFile(
        process.execPath,
        ["--import", "tsx", path.join(root, "cloud/manifest/cli.ts"), ...args],
        { cwd: root, env: { PATH: process.env.PATH ?? "", ...extraEnv } },
        (err, stdout, stderr) => done({ code: err ? (err.code as number) : 0, stdout, stderr }),
      );
    });
  }

  it("validate checks what apply needs: exit 6 naming an unset secret_env, 0 with it set or --skip-env", async () => {
    const without = await cli(["validate", DEMO]);
    expect(without.code).toBe(6);
    expect(without.stdout).toContain(`${DEMO}: invalid, 5 problems:`);
    expect(without.stdout).toContain(
      `${DEMO}:10: client demo-client: secret_env: environment variable DEMO_CLIENT_SECRET is not set`,
    );
    const withEnv = await cli(["validate", DEMO], env);
    expect(withEnv).toMatchObject({ code: 0 });
    expect(withEnv.stdout).toMatch(/: valid \(1 operator, 4 locations, 4 gateways, 16 devices\)/);
    expect((await cli(["validate", DEMO, "--skip-env"])).code).toBe(0);
  });

  it("validate --json lists the problems with their lines under schema_version 1", async () => {
    const file = path.join(dir, "bad.yaml");
    writeFileSync(file, BAD_YAML);
    const r = await cli(["validate", file, "--json", "--skip-env"]);
    expect(r.code).toBe(6);
    const out = JSON.parse(r.stdout) as {
      schema_version: number;
      valid: boolean;
      problems: { line: number }[];
    };
    expect(out).toMatchObject({ schema_version: 1, file, valid: false });
    expect(out.problems.length).toBe(12);
    expect(out.problems.every((p) => typeof p.line === "number")).toBe(true);
  });

  it("apply of an invalid manifest writes nothing: exit 6 and no database file or directory", async () => {
    const dataDir = path.join(dir, "fresh-data");
    const r = await cli(["apply", DEMO], { DATA_DIR: dataDir });
    expect(r.code).toBe(6);
    expect(r.stderr).toContain("nothing was applied");
    expect(r.stderr).toContain("DEMO_GATEWAY_SECRET is not set");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("apply creates the store when valid, and exits 3 when the database is unreachable", async () => {
    const dataDir = path.join(dir, "data");
    const ok = await cli(["apply", DEMO], { ...env, DATA_DIR: dataDir });
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/: applied \(\d+ created, 0 updated\) to .*cloud\.db$/m);
    // Nothing listens on port 1 of the loopback interface.
    const down = await cli(["apply", DEMO], { ...env, DATABASE_URL: "postgres://u:pw@127.0.0.1:1/x" });
    expect(down.code).toBe(3);
    expect(down.stderr).toContain("cannot reach the database at 127.0.0.1:1/x (DATABASE_URL)");
    expect(down.stderr).not.toContain("pw");
  });

  it("answers --version and --help, and exits 2 on a usage error", async () => {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string };
    expect((await cli(["--version"])).stdout.trim()).toBe(pkg.version);
    const help = await cli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("6  the manifest is invalid");
    expect((await cli(["bogus"])).code).toBe(2);
    expect((await cli(["validate"])).code).toBe(2);
  });
});
