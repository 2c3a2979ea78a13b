import { execFile, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OLD_NODE, oldNodeLine } from "../support/old-node.ts";

/**
 * Every program answers --version and --help, and a start-up failure names the variable, key or file at
 * fault (with exit 6 for invalid configuration, 1 for anything else, 2 for a usage error).
 */
const root = path.resolve(import.meta.dirname, "../..");
const VERSION = (JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as { version: string })
  .version;

type Result = { code: number; stdout: string; stderr: string };

/**
 * Runs a program through tsx from the repository, as `npm run …` does, with only the given environment
 * (and after any preloads).
 */
function run(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  preloads: string[] = [],
): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ["--import", "tsx", ...preloads.flatMap((p) => ["--import", p]), path.join(root, entry), ...args],
      { cwd: root, env: { PATH: process.env.PATH ?? "", LOG_FORMAT: "json", ...env }, timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Runs a program whose stdout is a pipe the reader has closed before it writes, as `| head` does once done. */
function runIntoClosedPipe(entry: string, args: readonly string[]): Promise<Result> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(root, entry), ...args], {
      cwd: root,
      env: { PATH: process.env.PATH ?? "" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
    });
    child.on("exit", (code) => done({ code: code ?? 1, stdout: "", stderr }));
  });
}

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), "entry-points-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("--version and --help", () => {
  it.each([
    ["parkctl", "gateway/cli/parkctl.ts", "Usage: parkctl"],
    ["the cloud (npm run dev:cloud)", "cloud/main.ts", "Usage: parking-cloud"],
    ["the gateway daemon (npm run dev:gateway)", "gateway/main.ts", "Usage: parking-gateway"],
    ["the demo (npm start)", "demo/main.ts", "DEMO_SKIP_GATEWAYS"],
    ["the simulator (npm run sim)", "hardware-sim/main.ts", "Usage: sim [options] [scenario]"],
    ["the manifest CLI (npm run manifest)", "cloud/manifest/cli.ts", "Usage: manifest"],
    ["the operator CLI (npm run operator)", "cloud/operator/cli.ts", "Usage: operator"],
  ])("%s", async (_name, entry, usage) => {
    const version = await run(entry, ["--version"]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const help = await run(entry, ["--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain(usage);
    expect(help.stdout).toContain("--version");
    expect(help.stdout).toMatch(/Examples?:/);
    expect(help.stdout).toMatch(/Exit codes/);
  });

  it("every operator command's help has an example", async () => {
    for (const command of [
      "revoke-rider-tokens",
      "end-session",
      "mark-payment",
      "webhooks",
      "webhook-log",
      "webhook-replay",
    ]) {
      const help = await run("cloud/operator/cli.ts", [command, "--help"]);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toContain(
        `Example:\n  $ DATA_DIR=./data/demo npm run operator -- ${command}`,
      );
    }
  });

  it("a tool whose reader went away (| head) stops quietly with 141, no stack trace", async () => {
    const bad = path.join(dir, "many-problems.yaml");
    writeFileSync(
      bad,
      `operators:\n${Array.from({ length: 500 }, (_, i) => `  - { nope_${i}: 1 }`).join("\n")}\n`,
    );
    for (const [entry, ...args] of [
      ["cloud/manifest/cli.ts", "schema"],
      ["cloud/manifest/cli.ts", "validate", bad],
      ["gateway/cli/parkctl.ts", "--help"],
    ] as const) {
      const r = await runIntoClosedPipe(entry, args);
      expect(r.stderr, entry).toBe("");
      expect(r.code, entry).toBe(141);
    }
  });

  it("the simulator's help lists its console commands, and a bad option is a usage error (exit 2)", async () => {
    const help = await run("hardware-sim/main.ts", ["--help"]);
    expect(help.stdout).toMatch(/^ {2}tap <reader> <uid> +a card held to a reader$/m);
    expect(help.stdout).toContain("demo/standalone/gw-cs-lockers.sim.yaml");
    const bad = await run("hardware-sim/main.ts", ["--frobnicate"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("unknown option '--frobnicate'");
  });
});

describe("on an unsupported Node every program says in one line what to run instead", () => {
  const programs = [
    ["parkctl", "gateway/cli/parkctl.ts"],
    ["dev:cloud", "cloud/main.ts"],
    ["dev:gateway", "gateway/main.ts"],
    ["start", "demo/main.ts"],
    ["sim", "hardware-sim/main.ts"],
    ["manifest", "cloud/manifest/cli.ts"],
    ["operator", "cloud/operator/cli.ts"],
    ["fuzz", "test/fuzz/cli.ts"],
  ];

  it.each(programs)("npm run %s", async (script, entry) => {
    const r = await run(entry, ["--config", "a b.yaml"], { npm_lifecycle_event: script }, [OLD_NODE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const npm = script === "start" ? "npm start" : `npm run ${script}`;
    expect(r.stderr).toBe(oldNodeLine(`${npm} -- --config 'a b.yaml'`));
  });

  it("run by tsx itself, it names that command", async () => {
    const r = await run("cloud/operator/cli.ts", ["riders", "list"], {}, [OLD_NODE]);
    expect(r.stderr).toBe(oldNodeLine("npx tsx cloud/operator/cli.ts riders list"));
  });

  it("every other npm script runs scripts/check-node.mjs first, which names the script", async () => {
    const pkg = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as {
      scripts: Record<string, string>;
    };
    const guarded = new Map(programs.map(([script, entry]) => [script, `tsx ${entry}`]));
    for (const [name, script] of Object.entries(pkg.scripts)) {
      const expected = guarded.get(name) ?? "node scripts/check-node.mjs && ";
      expect(script.startsWith(expected), `${name}: ${script}`).toBe(true);
    }
    const check = await new Promise<Result>((done) =>
      execFile(
        process.execPath,
        ["--import", OLD_NODE, path.join(root, "scripts/check-node.mjs")],
        { env: { PATH: process.env.PATH ?? "", npm_lifecycle_event: "typecheck" } },
        (err, stdout, stderr) => done({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
      ),
    );
    expect(check.code).toBe(1);
    expect(check.stderr).toBe(oldNodeLine("npm run typecheck"));
  });
});

describe("start-up errors name what is at fault", () => {
  let busy: Server;
  let port: number;
  beforeAll(async () => {
    busy = createServer();
    await new Promise<void>((r) => busy.listen(0, "127.0.0.1", () => r()));
    port = (busy.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => busy.close(() => r())));

  it("the cloud names PORT when the HTTP port is taken", async () => {
    const r = await run("cloud/main.ts", [], {
      PORT: String(port),
      MQTT_PORT: "0",
      DATA_DIR: path.join(dir, "cloud-a"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`PORT=${port}: 127.0.0.1:${port} is already in use`);
    expect(r.stderr).toContain("set PORT to a free port");
  });

  it("the demo names MQTT_PORT when the embedded broker's port is taken", async () => {
    const r = await run("demo/main.ts", [], {
      PORT: "0",
      MQTT_PORT: String(port),
      DATA_DIR: path.join(dir, "demo-a"),
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`MQTT_PORT=${port}: 127.0.0.1:${port} is already in use`);
  });

  it("a bad variable is named with exit 6: the cloud's, LOG_FORMAT, and the demo's DEMO_SKIP_GATEWAYS", async () => {
    const cloud = await run("cloud/main.ts", [], { PORT: "eighty", DATA_DIR: path.join(dir, "cloud-b") });
    expect(cloud.code).toBe(6);
    expect(cloud.stderr).toContain("PORT=eighty:");
    const format = await run("cloud/main.ts", [], { LOG_FORMAT: "xml", DATA_DIR: path.join(dir, "cloud-c") });
    expect(format.code).toBe(6);
    expect(format.stderr).toContain("LOG_FORMAT=xml:");
    const demo = await run("demo/main.ts", [], {
      DEMO_SKIP_GATEWAYS: "gw-cs-locker",
      DATA_DIR: path.join(dir, "demo-b"),
    });
    expect(demo.code).toBe(6);
    expect(demo.stderr).toContain(
      'DEMO_SKIP_GATEWAYS: the demo has no gateway gw-cs-locker (did you mean "gw-cs-lockers"?)',
    );
  });

  it("the gateway names the file and the key: an unreadable secret_file, a taken metrics.port, no config file", async () => {
    const config = path.join(dir, "gateway.yaml");
    const secret = path.join(dir, "no-such-secret");
    writeFileSync(
      config,
      [
        "gateway_id: gw-x",
        `secret_file: ${secret}`,
        "broker: { url: 'mqtt://127.0.0.1:1' }",
        `state_dir: ${path.join(dir, "gw-state")}`,
      ].join("\n"),
    );
    const r = await run("gateway/main.ts", ["--config", config]);
    expect(r.code).toBe(6);
    expect(r.stderr).toContain(`${config}: secret_file: cannot read ${secret}: no such file`);
    // With a readable secret, a metrics port already taken is named by its key.
    writeFileSync(secret, "gateway-secret-1\n");
    writeFileSync(
      config,
      `${readFileSync(config, "utf8")}\nmetrics: { host: 127.0.0.1, port: ${port} }\nlog_level: silent\n`,
    );
    const metrics = await run("gateway/main.ts", ["--config", config]);
    expect(metrics.code).toBe(1);
    expect(metrics.stderr).toContain(`${config}: metrics.port: 127.0.0.1:${port} is already in use`);
    const none = await run("gateway/main.ts", ["--config", path.join(dir, "absent.yaml")]);
    expect(none.code).toBe(6);
    expect(none.stderr).toContain(`no gateway config at ${path.join(dir, "absent.yaml")} (from --config)`);
  });
});
