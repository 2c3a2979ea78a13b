import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { isBuiltin } from "node:module";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml, stringify as stringifyYaml } from "yaml";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { DEMO_MANIFEST, demoLocker } from "../../demo/demo.ts";
import type { GatewayConfigInput } from "../../gateway/config.ts";
import { eventually } from "../support/eventually.ts";
import { OLD_NODE, oldNodeLine } from "../support/old-node.ts";
import { buildProduction, type ProductionBuild, REPO } from "../support/production-build.ts";

/**
 * The production build (`npm run build`: tsconfig.build.json, plain node, no TypeScript loader) runs:
 * every program it emits answers --version and --help, and the built manifest CLI, cloud, simulator,
 * gateway daemon and parkctl together carry a lock from the API to the simulated latch, as the systemd
 * units run them. Built once, into a directory of its own (test/support/production-build.ts).
 */
const VERSION = (JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { version: string }).version;
const SIM_SCENARIO = join(REPO, "demo/standalone/gw-cs-lockers.sim.yaml");
const GATEWAY_CONFIG = join(REPO, "demo/standalone/gw-cs-lockers.gateway.yaml");
const CLIENT = { id: "demo-client", secret: "demo-secret-change-me" };
const GATEWAY_SECRET = "demo-gateway-secret";

type Result = { code: number; stdout: string; stderr: string };

let build: ProductionBuild;
let dir: string;
const children: ChildProcess[] = [];

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "production-build-"));
  build = await buildProduction();
}, 180_000);

afterAll(async () => {
  for (const c of children) {
    if (c.pid && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once("exit", r));
      process.kill(-c.pid, "SIGTERM");
      await exited;
    }
  }
  await build?.remove();
  await rm(dir, { recursive: true, force: true });
});

/** Only PATH and what a test gives: nothing of this process's environment (no NODE_OPTIONS loader). */
const envOf = (env: Record<string, string>) => ({ PATH: process.env.PATH ?? "", LOG_FORMAT: "json", ...env });

/** A built program with plain node (after any preloads), to its exit. */
function run(
  entry: string,
  args: string[],
  env: Record<string, string> = {},
  preloads: string[] = [],
): Promise<Result> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      [...preloads.flatMap((o) => ["--import", o]), join(build.out, entry), ...args],
      { cwd: REPO, env: envOf(env), timeout: 60_000 },
      (err, stdout, stderr) =>
        done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** A built long-running program; what it prints collects in `out.text`. */
function start(entry: string, args: string[], out: { text: string }, env: Record<string, string> = {}) {
  const child = spawn(process.execPath, [join(build.out, entry), ...args], {
    cwd: REPO,
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group, so the simulator's socat children go with it.
    detached: true,
    env: envOf(env),
  });
  const collect = (d: Buffer) => {
    out.text += d.toString();
  };
  child.stdout?.on("data", collect);
  child.stderr?.on("data", collect);
  children.push(child);
  return child;
}

describe("the built programs answer --version and --help with plain node", () => {
  it.each([
    ["gateway/cli/parkctl.js", "Usage: parkctl"],
    ["gateway/main.js", "Usage: parking-gateway"],
    ["cloud/main.js", "Usage: parking-cloud"],
    ["cloud/manifest/cli.js", "Usage: manifest"],
    ["cloud/operator/cli.js", "Usage: operator"],
    ["hardware-sim/main.js", "Usage: sim"],
    ["demo/main.js", "DEMO_SKIP_GATEWAYS"],
  ])("%s", async (entry, usage) => {
    const version = await run(entry, ["--version"]);
    expect(version.code, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    const help = await run(entry, ["--help"]);
    expect(help.code, help.stderr).toBe(0);
    expect(help.stdout).toContain(usage);
  });
});

describe("on an unsupported Node the built programs say in one line what to run, before loading anything else", () => {
  it.each([
    "gateway/cli/parkctl.js",
    "gateway/main.js",
    "cloud/main.js",
    "cloud/manifest/cli.js",
    "cloud/operator/cli.js",
    "hardware-sim/main.js",
    "demo/main.js",
  ])("%s", async (entry) => {
    const r = await run(entry, ["--help"], {}, [OLD_NODE]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(oldNodeLine(`node ${relative(REPO, join(build.out, entry))} --help`));
  });

  it("the bundles import only Node's own modules: packages load by require() after the check", () => {
    for (const bundle of ["gateway/main.js", "gateway/cli/parkctl.js"]) {
      const text = readFileSync(join(build.out, bundle), "utf8");
      const statements = /(?:^|[;}\n])\s*import\s*(?:[\w$\s{},*]+?\s*from\s*)?"([^"]+)"/g;
      const imported = [...text.matchAll(statements)].map((m) => m[1]);
      expect(imported.length).toBeGreaterThan(0);
      expect(imported.filter((i) => !isBuiltin(i ?? "") && !i?.startsWith("./"))).toEqual([]);
    }
  });
});

it("every systemd unit runs a program the build emits", () => {
  for (const unit of ["parking-gateway.service", "parking-cloud.service", "parking-hardware-sim.service"]) {
    const exec = /^ExecStart=(.*)$/m.exec(readFileSync(join(REPO, "systemd", unit), "utf8"))?.[1] ?? "";
    const script = /\/opt\/parking\/dist\/(\S+\.js)/.exec(exec)?.[1];
    expect(script, `${unit}: ${exec}`).toBeDefined();
    expect(existsSync(join(build.out, script as string)), `${unit}: ${script}`).toBe(true);
  }
});

describe("the built programs run a site end to end", () => {
  it("manifest apply, cloud, simulator, gateway daemon, parkctl: a lock through the API moves the latch", async () => {
    const dataDir = join(dir, "cloud");
    const secrets = { DEMO_CLIENT_SECRET: CLIENT.secret, DEMO_GATEWAY_SECRET: GATEWAY_SECRET };
    const applied = await run("cloud/manifest/cli.js", ["apply", DEMO_MANIFEST], {
      DATA_DIR: dataDir,
      ...secrets,
    });
    expect(applied.code, applied.stderr).toBe(0);

    // The cloud and its embedded broker on free ports; it logs where they are once ready.
    const cloud = { text: "" };
    start("cloud/main.js", [], cloud, { DATA_DIR: dataDir, PORT: "0", MQTT_PORT: "0" });
    const ready = await eventually(
      () => {
        const line = cloud.text.split("\n").find((l) => l.includes('"cloud ready"'));
        expect(line, cloud.text).toBeDefined();
        return JSON.parse(line as string) as { base_url: string; mqtt: string };
      },
      30_000,
      50,
    );

    const sim = { text: "" };
    const simProc = start("hardware-sim/main.js", ["--dir", join(dir, "sim"), SIM_SCENARIO], sim);
    await eventually(() => expect(sim.text).toContain("ready"), 30_000, 50);
    const busPath = /bus bus0 at (\S+)/.exec(sim.text)?.[1];
    expect(busPath).toBe(join(dir, "sim", "bus0"));

    // The shipped standalone config with this run's broker, secret, state and bus.
    const secretFile = join(dir, "gateway-secret");
    writeFileSync(secretFile, `${GATEWAY_SECRET}\n`, { mode: 0o600 });
    const shipped = parseYaml(readFileSync(GATEWAY_CONFIG, "utf8")) as GatewayConfigInput;
    const configFile = join(dir, "gateway.yaml");
    writeFileSync(
      configFile,
      stringifyYaml({
        ...shipped,
        broker: { ...shipped.broker, url: ready.mqtt },
        state_dir: join(dir, "gateway"),
        secret_file: secretFile,
        buses: (shipped.buses ?? []).map((b) => ({ ...b, path: busPath as string })),
      } satisfies GatewayConfigInput),
    );
    const gw = { text: "" };
    start("gateway/main.js", ["--config", configFile], gw, { NODE_ENV: "production" });

    // The built parkctl finds the daemon through its config once it drives the cloud's devices.
    await eventually(
      async () => {
        const r = await run("gateway/cli/parkctl.js", ["--config", configFile, "devices", "--json"]);
        expect(r.code, `${r.stderr}\n${gw.text}`).toBe(0);
        const devices = (JSON.parse(r.stdout) as { devices: { alias: string; reachable: boolean }[] })
          .devices;
        expect(devices.find((d) => d.alias === "1")?.reachable).toBe(true);
      },
      30_000,
      100,
    );

    const tokenRes = await fetch(`${ready.base_url}/oauth2/token`, {
      method: "POST",
      headers: { authorization: `Basic ${Buffer.from(`${CLIENT.id}:${CLIENT.secret}`).toString("base64")}` },
      body: new URLSearchParams({ grant_type: "client_credentials" }),
    });
    expect(tokenRes.status).toBe(200);
    const { access_token: token } = (await tokenRes.json()) as { access_token: string };
    const headers = { authorization: `Bearer ${token}`, "content-type": "application/json" };
    const locker = demoLocker(loadManifest(DEMO_MANIFEST, secrets));
    expect(locker).toMatchObject({ gateway: "gw-cs-lockers", alias: "1" });
    const post = await fetch(`${ready.base_url}/device/v1/devices/${locker.id}/commands`, {
      method: "POST",
      headers,
      body: JSON.stringify({ command: "lock" }),
    });
    expect(post.status, await post.clone().text()).toBe(200);
    const { id } = (await post.json()) as { id: string };
    await eventually(
      async () => {
        const res = await fetch(`${ready.base_url}/device/v1/commands/${id}`, { headers });
        const c = (await res.json()) as { state: { value: string } };
        expect(c.state.value, gw.text).toBe("SUCCESS");
      },
      30_000,
      100,
    );

    // The daemon reads the latch afresh for parkctl, and the simulator shows the one it moved.
    const device = await run("gateway/cli/parkctl.js", ["--config", configFile, "device", "1", "--json"]);
    expect(device.code, device.stderr).toBe(0);
    expect(JSON.parse(device.stdout)).toMatchObject({ device: { alias: "1", latch: "locked" } });
    simProc.stdin?.write("status\n");
    await eventually(() => expect(sim.text).toMatch(/^bus0 1\/1 locked$/m), 10_000, 50);
  });
});
