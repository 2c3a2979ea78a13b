import { execFile } from "node:child_process";
import { accessSync, constants, readdirSync, readFileSync } from "node:fs";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SYSTEMD_NOTIFY } from "../../gateway/adapters/systemd/sd-notify.ts";
import { DEFAULT_SOCKET } from "../../gateway/cli/context.ts";

const run = promisify(execFile);
const SYSTEMD_DIR = resolve(import.meta.dirname, "../../systemd");
const UNITS = ["parking-gateway.service", "parking-cloud.service", "parking-hardware-sim.service"];
const NODE = "/usr/bin/node";

/**
 * Exposure scores of `systemd-analyze security --offline=true` (systemd 252, Debian 12), measured when the
 * units were written: gateway 1.8 (it keeps the network, serial/GPIO devices, supplementary groups and
 * NotifyAccess=all), cloud 1.2, simulator 0.9. The gates leave a little room for scoring changes, no more.
 */
const EXPOSURE_LIMIT: Record<string, number> = {
  "parking-gateway.service": 2.0,
  "parking-cloud.service": 1.5,
  "parking-hardware-sim.service": 1.2,
};

type Unit = Map<string, Map<string, string[]>>;

function parseUnit(text: string): Unit {
  const unit: Unit = new Map();
  let section = new Map<string, string[]>();
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const head = /^\[(.+)\]$/.exec(line);
    if (head?.[1]) {
      section = unit.get(head[1]) ?? new Map();
      unit.set(head[1], section);
      continue;
    }
    const eq = line.indexOf("=");
    const key = line.slice(0, eq);
    section.set(key, [...(section.get(key) ?? []), line.slice(eq + 1)]);
  }
  return unit;
}

const units = new Map(UNITS.map((u) => [u, parseUnit(readFileSync(join(SYSTEMD_DIR, u), "utf8"))]));

function get(unit: string, section: string, key: string): string[] {
  return units.get(unit)?.get(section)?.get(key) ?? [];
}
const service = (unit: string, key: string) => get(unit, "Service", key);

let work: string;
beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), "systemd-units-"));
});
afterAll(async () => {
  await rm(work, { recursive: true, force: true });
});

/**
 * `systemd-analyze verify` on a unit; prints nothing and exits 0 when the unit is clean. It needs no
 * running systemd (PID 1 here is not systemd) and no --root: units it depends on come from the host's unit
 * path. The one thing it checks on the host that a unit cannot control is that ExecStart's binary exists:
 * where Node is not installed at /usr/bin/node (the path on the controllers), the copy under test points
 * at this machine's node instead, and only that line differs.
 */
async function verify(unitFile: string): Promise<{ code: number; output: string }> {
  let file = unitFile;
  let nodeMissing = false;
  try {
    accessSync(NODE, constants.X_OK);
  } catch {
    nodeMissing = true;
  }
  if (nodeMissing) {
    const text = readFileSync(unitFile, "utf8").replaceAll(
      `ExecStart=${NODE} `,
      `ExecStart=${process.execPath} `,
    );
    file = join(work, unitFile.split("/").pop() as string);
    await writeFile(file, text);
  }
  try {
    const { stdout, stderr } = await run("systemd-analyze", ["verify", file], {
      env: { ...process.env, SYSTEMD_LOG_COLOR: "0" },
    });
    return { code: 0, output: stdout + stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    return { code: e.code ?? -1, output: (e.stdout ?? "") + (e.stderr ?? "") };
  }
}

describe("systemd units pass systemd-analyze verify", () => {
  it("ships exactly the three units", () => {
    expect(
      readdirSync(SYSTEMD_DIR)
        .filter((f) => f.endsWith(".service"))
        .sort(),
    ).toEqual([...UNITS].sort());
  });

  it.each(UNITS)("%s verifies with no message at all", async (unit) => {
    const r = await verify(join(SYSTEMD_DIR, unit));
    expect(r.output).toBe("");
    expect(r.code).toBe(0);
  });

  it("verify does report a broken unit (so the clean runs above mean something)", async () => {
    const broken = readFileSync(join(SYSTEMD_DIR, "parking-gateway.service"), "utf8")
      .replace("Type=notify", "Type=notfy")
      .replace("WatchdogSec=30", "WatchdogSek=30")
      .replace("ExecStart=/usr/bin/node ", "ExecStart=/usr/bin/node-missing ");
    const file = join(work, "parking-gateway.service");
    await writeFile(file, broken);
    const r = await verify(file);
    expect(r.output).toContain("Failed to parse service type, ignoring: notfy");
    expect(r.output).toContain("Unknown key 'WatchdogSek' in section [Service]");
    expect(r.output).toContain("Command /usr/bin/node-missing is not executable");
    expect(r.code).not.toBe(0);
  });
});

describe("parking-gateway.service", () => {
  const u = "parking-gateway.service";

  it("is a notify service with a health-gated watchdog, restarted on failure within start limits", () => {
    expect(service(u, "Type")).toEqual(["notify"]);
    expect(service(u, "WatchdogSec")).toEqual(["30"]);
    expect(service(u, "Restart")).toEqual(["on-failure"]);
    expect(service(u, "RestartSec")).toEqual(["5"]);
    expect(get(u, "Unit", "StartLimitIntervalSec")).toEqual(["600"]);
    expect(get(u, "Unit", "StartLimitBurst")).toEqual(["5"]);
  });

  it("accepts notifications from child processes, because systemd-notify sends them", () => {
    expect(SYSTEMD_NOTIFY).toBe("/usr/bin/systemd-notify");
    expect(service(u, "NotifyAccess")).toEqual(["all"]);
  });

  it("runs the production build with plain node (no TypeScript loader), small V8 heaps, and its config", () => {
    expect(service(u, "ExecStart")).toEqual([
      "/usr/bin/node --max-semi-space-size=1 --v8-pool-size=1 /opt/parking/dist/gateway/main.js --config /etc/parking-gateway/config.yaml",
    ]);
    expect(service(u, "WorkingDirectory")).toEqual(["/opt/parking"]);
  });

  it("runs as parking-gateway with the serial and GPIO groups, its state and runtime directories", () => {
    expect(service(u, "User")).toEqual(["parking-gateway"]);
    expect(service(u, "SupplementaryGroups")).toEqual(["dialout gpio"]);
    expect(service(u, "StateDirectory")).toEqual(["parking-gateway"]);
    expect(service(u, "RuntimeDirectory")).toEqual(["parking-gateway"]);
    expect(`/run/${service(u, "RuntimeDirectory")[0]}/control.sock`).toBe(DEFAULT_SOCKET);
  });

  it("keeps Node's compile cache for the daemon's bundle in its own cache directory", () => {
    expect(service(u, "CacheDirectory")).toEqual(["parking-gateway"]);
    expect(service(u, "Environment")).toContain(
      `NODE_COMPILE_CACHE=/var/cache/${service(u, "CacheDirectory")[0]}`,
    );
  });

  it("allows only serial adapters and GPIO chips as devices", () => {
    expect(service(u, "DevicePolicy")).toEqual(["closed"]);
    expect(service(u, "DeviceAllow")).toEqual(["char-ttyUSB rw", "char-ttyACM rw", "char-gpiochip rw"]);
  });

  it("logs to journald", () => {
    expect(service(u, "StandardOutput")).toEqual(["journal"]);
    expect(service(u, "StandardError")).toEqual(["journal"]);
  });

  it("carries the hardening Node tolerates", () => {
    const expected: Record<string, string> = {
      NoNewPrivileges: "yes",
      ProtectSystem: "strict",
      ProtectHome: "yes",
      PrivateTmp: "yes",
      ProtectKernelTunables: "yes",
      ProtectKernelModules: "yes",
      ProtectControlGroups: "yes",
      RestrictAddressFamilies: "AF_UNIX AF_INET AF_INET6 AF_NETLINK",
      LockPersonality: "yes",
      RestrictRealtime: "yes",
      SystemCallArchitectures: "native",
      CapabilityBoundingSet: "",
    };
    for (const [key, value] of Object.entries(expected)) expect(service(u, key), key).toEqual([value]);
  });
});

describe("parking-cloud.service and parking-hardware-sim.service", () => {
  it("run the cloud as a simple, non-root service with state, an optional env file and restarts", () => {
    const u = "parking-cloud.service";
    expect(service(u, "Type")).toEqual(["simple"]);
    expect(service(u, "DynamicUser")).toEqual(["yes"]);
    expect(service(u, "User")).not.toContain("root");
    expect(service(u, "StateDirectory")).toEqual(["parking-cloud"]);
    expect(service(u, "EnvironmentFile")).toEqual(["-/etc/parking-cloud/env"]);
    expect(service(u, "Restart")).toEqual(["on-failure"]);
    expect(service(u, "ExecStart")).toEqual(["/usr/bin/node /opt/parking/dist/cloud/main.js"]);
  });

  it("mark the simulator as bench and demo only, run it as the gateway's user with no network", () => {
    const u = "parking-hardware-sim.service";
    expect(get(u, "Unit", "Description")[0]).toContain("bench rigs and demos only");
    expect(service(u, "User")).toEqual(["parking-gateway"]);
    expect(service(u, "ExecStart")[0]).toBe(
      "/usr/bin/node /opt/parking/dist/hardware-sim/main.js --dir /run/parking-hardware-sim $SIM_ARGS",
    );
    expect(service(u, "RuntimeDirectory")).toEqual(["parking-hardware-sim"]);
    expect(service(u, "RestrictAddressFamilies")).toEqual(["AF_UNIX"]);
    expect(service(u, "IPAddressDeny")).toEqual(["any"]);
  });
});

describe("exposure (systemd-analyze security --offline=true)", () => {
  it.each(UNITS)("%s sets no MemoryDenyWriteExecute (V8's JIT needs W+X pages)", (unit) => {
    expect(service(unit, "MemoryDenyWriteExecute")).toEqual([]);
  });

  it.each(UNITS)("%s stays under its measured exposure threshold", async (unit) => {
    const limit = EXPOSURE_LIMIT[unit] as number;
    const { stdout } = await run("systemd-analyze", [
      "security",
      "--offline=true",
      `--threshold=${Math.floor(limit * 10)}`,
      join(SYSTEMD_DIR, unit),
    ]);
    const score = Number(/Overall exposure level for \S+: ([\d.]+)/.exec(stdout)?.[1]);
    expect(score).toBeGreaterThan(0);
    expect(score).toBeLessThan(limit);
  });
});
