import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { createStaffService } from "../../cloud/staff/staff-service.ts";
import { openDb } from "../../cloud/store/db.ts";
import { FakeClock } from "../support/fake-clock.ts";

const root = path.resolve(import.meta.dirname, "../..");
const OP = "aaaaaaaa-0000-4000-8000-000000000001";
const UNKNOWN_OP = "cccccccc-0000-4000-8000-000000000003";

type Run = { code: number; stdout: string; stderr: string };

describe("npm run operator -- staff", () => {
  let dir: string;

  function operator(
    args: string[],
    more: { env?: Record<string, string>; stdin?: string } = {},
  ): Promise<Run> {
    return new Promise((done) => {
      const child = execFile(
        process.execPath,
        ["--import", "tsx", path.join(root, "cloud/operator/cli.ts"), "staff", ...args],
        { cwd: root, env: { PATH: process.env.PATH ?? "", DATA_DIR: dir, ...more.env } },
        (err, stdout, stderr) => done({ code: err ? (err.code as number) : 0, stdout, stderr }),
      );
      child.stdin?.end(more.stdin ?? "");
    });
  }

  /** Whether the password signs the account in, as the console would check it. */
  async function signsIn(email: string, password: string): Promise<boolean> {
    const db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
    try {
      return (
        (await createStaffService({ db, clock: new FakeClock() }).authenticate(email, password)) !== null
      );
    } finally {
      await db.destroy();
    }
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "operator-staff-"));
    const db = await openDb({ kind: "sqlite", file: path.join(dir, "cloud.db") });
    await applyManifest(
      db,
      SiteManifest.parse({ version: 1, operators: [{ id: OP, name: "A" }] }),
      new FakeClock(),
    );
    await db.destroy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("adds staff with the password from STAFF_PASSWORD, another variable, or stdin, and lists them", async () => {
    const fromEnv = await operator(["add", "Ann@example.com", "--role", "operator", "--operator", OP], {
      env: { STAFF_PASSWORD: "ann's password" },
    });
    expect(fromEnv, fromEnv.stderr).toMatchObject({ code: 0 });
    expect(fromEnv.stdout).toBe(`added Ann@example.com: operator, operator ${OP}\n`);
    const named = await operator(
      ["add", "bob@example.com", "--role", "viewer", "--operator", OP, "--password-env", "BOB_PW"],
      { env: { BOB_PW: "bob's password" } },
    );
    expect(named, named.stderr).toMatchObject({ code: 0 });
    const piped = await operator(["add", "root@example.com", "--role", "admin", "--superadmin"], {
      stdin: "root's password\nignored\n",
    });
    expect(piped, piped.stderr).toMatchObject({
      code: 0,
      stdout: "added root@example.com: admin, superadmin\n",
    });
    expect(await signsIn("ann@example.com", "ann's password")).toBe(true);
    expect(await signsIn("bob@example.com", "bob's password")).toBe(true);
    expect(await signsIn("root@example.com", "root's password")).toBe(true);

    const list = await operator(["list"]);
    expect(list.stdout).toBe(
      [
        `Ann@example.com\toperator\t${OP}\tactive`,
        `bob@example.com\tviewer\t${OP}\tactive`,
        "root@example.com\tadmin\tsuperadmin\tactive",
        "",
      ].join("\n"),
    );
    expect((await operator(["list", "--operator", OP])).stdout.split("\n")).toHaveLength(3);
  });

  it("refuses a taken email in any case (6), an unknown operator (4), and bad usage (2)", async () => {
    const env = { STAFF_PASSWORD: "a fine password" };
    const taken = await operator(["add", "ANN@EXAMPLE.COM", "--role", "viewer", "--operator", OP], { env });
    expect(taken).toMatchObject({ code: 6, stderr: "ANN@EXAMPLE.COM is already staff\n" });
    const noOp = await operator(["add", "x@example.com", "--role", "viewer", "--operator", UNKNOWN_OP], {
      env,
    });
    expect(noOp).toMatchObject({ code: 4, stderr: `no operator ${UNKNOWN_OP}\n` });
    const usage: [string[], RegExp][] = [
      [
        ["add", "x@example.com", "--role", "boss", "--operator", OP],
        /--role: one of viewer, operator, admin/,
      ],
      [["add", "x@example.com", "--role", "viewer"], /exactly one of --operator and --superadmin/],
      [["add", "x@example.com", "--role", "viewer", "--operator", OP, "--superadmin"], /exactly one/],
      [["add", "x@example.com", "--role", "viewer", "--operator", "nope"], /--operator: must be a UUID/],
      [["add", "not-an-email", "--role", "viewer", "--operator", OP], /not an email address/],
      // A password is never an argument.
      [
        ["add", "x@example.com", "--role", "viewer", "--operator", OP, "--password", "secret123456"],
        /unknown option/,
      ],
    ];
    for (const [args, message] of usage) {
      const res = await operator(args, { env });
      expect(res.code, args.join(" ")).toBe(2);
      expect(res.stderr).toMatch(message);
    }
    const short = await operator(["add", "x@example.com", "--role", "viewer", "--operator", OP], {
      env: { STAFF_PASSWORD: "short" },
    });
    expect(short).toMatchObject({ code: 2, stderr: "the password must be at least 10 characters\n" });
    expect((await operator(["list"])).stdout).not.toContain("x@example.com");
  });

  it("resets a password from stdin and disables an account; an unknown email is 4", async () => {
    await operator(["add", "carol@example.com", "--role", "viewer", "--operator", OP], {
      env: { STAFF_PASSWORD: "carol's first" },
    });
    const reset = await operator(["reset", "Carol@Example.com"], { stdin: "carol's second\n" });
    expect(reset).toMatchObject({
      code: 0,
      stdout: "reset the password of carol@example.com and ended their console sessions\n",
    });
    expect(await signsIn("carol@example.com", "carol's first")).toBe(false);
    expect(await signsIn("carol@example.com", "carol's second")).toBe(true);
    const disabled = await operator(["disable", "carol@example.com"]);
    expect(disabled).toMatchObject({
      code: 0,
      stdout: "disabled carol@example.com and ended their console sessions\n",
    });
    expect(await signsIn("carol@example.com", "carol's second")).toBe(false);
    expect((await operator(["list"])).stdout).toMatch(/carol@example\.com\tviewer\t.*\tdisabled 20\d\d-/);
    expect(await operator(["disable", "nobody@example.com"])).toMatchObject({
      code: 4,
      stderr: "no staff member nobody@example.com\n",
    });
    expect(await operator(["reset", "nobody@example.com"], { stdin: "a long password\n" })).toMatchObject({
      code: 4,
    });
  });

  it("has help with examples and exit codes", async () => {
    const help = await operator(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Examples:");
    expect(help.stdout).toContain("staff add ann@example.com --role operator");
    expect(help.stdout).toMatch(/Exit codes: 0 ok, 1 unexpected, 2 usage/);
    expect(help.stdout).toContain("never an argument");
    for (const command of ["add", "list", "disable", "reset"]) {
      const sub = await operator([command, "--help"]);
      expect(sub.code, command).toBe(0);
      expect(sub.stdout, command).toContain(
        `Example:\n  $ DATA_DIR=./data/demo npm run operator -- staff ${command}`,
      );
    }
  });
});
