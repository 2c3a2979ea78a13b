import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyManifest } from "../../cloud/manifest/apply-manifest.ts";
import { SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import { openDb } from "../../cloud/store/db.ts";
import { refreshTokenRepository } from "../../cloud/users/refresh-token-repository.ts";
import { hashRefreshToken, issueRefreshToken } from "../../cloud/users/refresh-tokens.ts";
import { FakeClock } from "../support/fake-clock.ts";

const root = path.resolve(import.meta.dirname, "../..");
const OP = "aaaaaaaa-0000-4000-8000-000000000001";
const ANN = "7d4a52e0-3c1b-4f6e-8a90-1b2c3d4e5f01";

type Run = { code: number; stdout: string; stderr: string };

describe("npm run operator -- revoke-rider-tokens", () => {
  let dir: string;
  const file = () => path.join(dir, "cloud.db");
  const tokens: string[] = [];

  function operator(args: string[]): Promise<Run> {
    return new Promise((done) => {
      execFile(
        process.execPath,
        ["--import", "tsx", path.join(root, "cloud/operator/cli.ts"), ...args],
        { cwd: root, env: { PATH: process.env.PATH ?? "", DATA_DIR: dir } },
        (err, stdout, stderr) => done({ code: err ? (err.code as number) : 0, stdout, stderr }),
      );
    });
  }

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), "operator-riders-"));
    const db = await openDb({ kind: "sqlite", file: file() });
    const clock = new FakeClock();
    await applyManifest(
      db,
      SiteManifest.parse({
        version: 1,
        operators: [
          { id: OP, name: "A", riders: [{ user_id: "ann", service_user_id: ANN }, { user_id: "bob" }] },
        ],
      }),
      clock,
    );
    for (let i = 0; i < 2; i++)
      tokens.push(await issueRefreshToken(db, { id: ANN, operatorId: OP }, clock.now()));
    await db.destroy();
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("revokes every refresh token of a rider named by user_id, then by service_user_id (none left)", async () => {
    const first = await operator(["revoke-rider-tokens", "--operator", OP, "--user-id", "ann"]);
    expect(first, first.stderr).toMatchObject({ code: 0 });
    expect(first.stdout).toBe(
      `revoked the access tokens and 2 refresh tokens of rider ann (service_user_id ${ANN})\n`,
    );
    const db = await openDb({ kind: "sqlite", file: file() });
    try {
      const rows = await refreshTokenRepository(db).ofRider(ANN);
      expect(rows.map((r) => r.tokenHash).sort()).toEqual(tokens.map(hashRefreshToken).sort());
      expect(rows.every((r) => r.revokedAt !== null)).toBe(true);
    } finally {
      await db.destroy();
    }
    const again = await operator([
      "revoke-rider-tokens",
      "--operator",
      OP,
      "--service-user-id",
      ANN.toUpperCase(),
    ]);
    expect(again.stdout).toBe(
      `revoked the access tokens and 0 refresh tokens of rider ann (service_user_id ${ANN})\n`,
    );
  });

  it("exits 4 for a rider the operator does not have, 2 for a wrong command line", async () => {
    const unknown = await operator(["revoke-rider-tokens", "--operator", OP, "--user-id", "zed"]);
    expect(unknown).toMatchObject({ code: 4, stderr: "no such rider of this operator\n" });
    for (const args of [
      ["revoke-rider-tokens", "--operator", OP],
      ["revoke-rider-tokens", "--operator", OP, "--user-id", "ann", "--service-user-id", ANN],
      ["revoke-rider-tokens", "--operator", "op-a", "--user-id", "ann"],
      ["revoke-rider-tokens", "--operator", OP, "--service-user-id", "ann"],
      ["revoke-rider-tokens", "--user-id", "ann"],
    ])
      expect((await operator(args)).code, args.join(" ")).toBe(2);
  });
});
