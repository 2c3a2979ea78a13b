import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { loadManifest } from "../../cloud/manifest/load-manifest.ts";
import { DEMO_MANIFEST, demoBanner, demoLocker, type RunningDemo, startDemo } from "../../demo/demo.ts";
import type { SkippedGateway } from "../../demo/standalone-gateway.ts";
import { runParkctl } from "../../gateway/cli/run-parkctl.ts";
import { parseGatewayConfig } from "../../gateway/config.ts";
import { SimSiteSpec } from "../../hardware-sim/site.ts";
import { eventually } from "../support/eventually.ts";

/**
 * docs/walkthroughs.md, "Drive the standalone simulator with a gateway": the demo leaves gw-cs-lockers out
 * (DEMO_SKIP_GATEWAYS) and writes a gateway config and a simulator scenario for it, `npm run sim` plays its
 * lock boards on pseudo-terminals, a gateway daemon of its own (`npm run dev:gateway`) drives them, parkctl
 * finds it by --gateway, and a lock through the API moves the simulated latch. The demo runs in this
 * process on free ports; the simulator and the daemon are child processes, as in the README.
 */
const root = resolve(import.meta.dirname, "../..");
const SIM_SCENARIO = join(root, "demo/standalone/gw-cs-lockers.sim.yaml");
const GATEWAY_CONFIG = join(root, "demo/standalone/gw-cs-lockers.gateway.yaml");
const GW = "gw-cs-lockers";

let dir: string;
let dataDir: string;
let demo: RunningDemo;
const children: ChildProcess[] = [];

function start(args: string[], out: { text: string }): ChildProcess {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
    // Its own process group, so the simulator's socat children go with it.
    detached: true,
    env: { ...process.env, LOG_FORMAT: "json" },
  });
  child.stdout?.on("data", (d: Buffer) => {
    out.text += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out.text += d.toString();
  });
  children.push(child);
  return child;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "walkthrough-"));
  dataDir = join(dir, "demo");
  demo = await startDemo({
    env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dataDir, DEMO_SKIP_GATEWAYS: GW },
    log: pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" }),
  });
});

afterAll(async () => {
  for (const c of children) {
    if (c.pid && c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once("exit", r));
      process.kill(-c.pid, "SIGTERM");
      await exited;
    }
  }
  await demo?.stop();
  await rm(dir, { recursive: true, force: true });
});

async function parkctl(argv: string[]) {
  let stdout = "";
  let stderr = "";
  const code = await runParkctl(argv, {
    stdout: { write: (t) => (stdout += t), isTTY: false },
    stderr: { write: (t) => (stderr += t), isTTY: false },
    stdin: { isTTY: false },
    env: { DATA_DIR: dataDir, USER: "tech1" },
  });
  return { code, stdout, stderr };
}

async function api<T>(method: string, path: string, token: string, body?: unknown): Promise<T> {
  const res = await fetch(`${demo.cloud.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body ? { "content-type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

describe("the demo leaves a gateway to a daemon of your own (DEMO_SKIP_GATEWAYS)", () => {
  it("does not run it, writes its broker secret owner-only, and says so in the banner", () => {
    expect(demo.gateways.gateways.map((g) => g.config.gateway_id)).not.toContain(GW);
    const secretFile = join(dataDir, "gateways", GW, "secret");
    const stateDir = join(dataDir, "gateways", GW);
    expect(demo.skipped).toEqual([
      {
        id: GW,
        secretFile,
        stateDir,
        gatewayFile: join(stateDir, "gateway.yaml"),
        simFile: join(stateDir, "sim.yaml"),
        simDir: join(dataDir, "sim", GW),
      },
    ]);
    expect(readFileSync(secretFile, "utf8").trim()).toBe("demo-gateway-secret");
    expect(statSync(secretFile).mode & 0o777).toBe(0o600);
  });

  it("ships a simulator scenario and a gateway config that match the demo's wiring of gw-cs-lockers", () => {
    const manifest = loadManifest(DEMO_MANIFEST, { DEMO_CLIENT_SECRET: "x", DEMO_GATEWAY_SECRET: "y" });
    const gw = manifest.operators
      .flatMap((o) => o.locations.flatMap((l) => l.gateways))
      .find((g) => g.id === GW);
    const wiring = new Map<number, number>();
    for (const d of gw?.devices ?? [])
      if (d.bus) wiring.set(d.bus.board, Math.max(wiring.get(d.bus.board) ?? 0, d.bus.channel));
    const scenario = SimSiteSpec.parse(parseYaml(readFileSync(SIM_SCENARIO, "utf8")));
    const boards = scenario.buses.bus0?.boards ?? [];
    expect(boards.map((b) => b.address).sort()).toEqual([...wiring.keys()].sort());
    for (const b of boards) expect(b.channels).toBeGreaterThanOrEqual(wiring.get(b.address) ?? 99);

    const cfg = parseGatewayConfig(parseYaml(readFileSync(GATEWAY_CONFIG, "utf8")), GATEWAY_CONFIG);
    expect(cfg.gateway_id).toBe(GW);
    expect(cfg.buses.map((b) => [b.name, b.boards])).toEqual([["bus0", [...wiring.keys()].sort()]]);
    // Where `npm start` (DATA_DIR ./data/demo) keeps this gateway's state and writes its secret.
    expect(cfg.state_dir).toBe("./data/demo/gateways/gw-cs-lockers");
    expect(cfg.secret_file).toBe("./data/demo/gateways/gw-cs-lockers/secret");
    expect(cfg.broker.url).toBe("mqtt://127.0.0.1:1884");
  });

  it("the banner names the two commands, with the files the demo wrote for this run", () => {
    const s = demo.skipped[0] as SkippedGateway;
    const banner = demoBanner(demo);
    expect(banner).toContain(`npm run sim -- --dir ${s.simDir} ${s.simFile}`);
    expect(banner).toContain(`npm run dev:gateway -- --config ${s.gatewayFile}`);
    const cfg = parseGatewayConfig(parseYaml(readFileSync(s.gatewayFile, "utf8")), s.gatewayFile);
    expect(cfg.broker.url).toBe(demo.cloud.mqttUrl);
    expect(statSync(s.gatewayFile).mode & 0o777).toBe(0o600);
  });

  it("a lock through the API reaches the standalone simulator through the gateway daemon", async () => {
    // The banner's two commands, as printed: the files the demo wrote, on this run's ports.
    const s = demo.skipped[0] as SkippedGateway;
    const sim = { text: "" };
    const simProc = start(["hardware-sim/main.ts", "--dir", s.simDir, s.simFile], sim);
    await eventually(() => expect(sim.text).toContain("ready"), 30_000, 50);
    expect(/bus bus0 at (\S+)/.exec(sim.text)?.[1]).toBe(join(s.simDir, "bus0"));
    const gw = { text: "" };
    start(["gateway/main.ts", "--config", s.gatewayFile], gw);

    // parkctl finds the daemon where the demo's own gateway would have been.
    await eventually(
      async () => {
        const r = await parkctl(["--gateway", GW, "devices", "--json"]);
        expect(r.code, `${r.stderr}\n${gw.text}`).toBe(0);
        const devices = (JSON.parse(r.stdout) as { devices: { alias: string; reachable: boolean }[] })
          .devices;
        expect(devices.find((d) => d.alias === "1")?.reachable).toBe(true);
      },
      30_000,
      100,
    );

    const form = new URLSearchParams({ grant_type: "client_credentials" });
    const auth = Buffer.from("demo-client:demo-secret-change-me").toString("base64");
    const tokenRes = await fetch(`${demo.cloud.baseUrl}/oauth2/token`, {
      method: "POST",
      headers: { authorization: `Basic ${auth}` },
      body: form,
    });
    const { access_token: token } = (await tokenRes.json()) as { access_token: string };
    // Locker 1 of CS-L, the README's example device, on board 1 channel 1.
    const locker = demoLocker(demo.manifest);
    expect(locker).toMatchObject({ gateway: GW, alias: "1" });
    const cmd = await api<{ id: string }>("POST", `/device/v1/devices/${locker.id}/commands`, token, {
      command: "lock",
    });
    await eventually(
      async () => {
        const c = await api<{ state: { value: string } }>("GET", `/device/v1/commands/${cmd.id}`, token);
        expect(c.state.value).toBe("SUCCESS");
      },
      30_000,
      100,
    );

    // The simulator's console shows the latch it moved.
    simProc.stdin?.write("status\n");
    await eventually(() => expect(sim.text).toMatch(/^bus0 1\/1 locked$/m), 10_000, 50);
    expect(sim.text).toMatch(/^bus0 1\/2 unlocked$/m);
  });
});
