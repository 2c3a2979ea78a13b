import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { demoBanner, type RunningDemo, startDemo } from "../../demo/demo.ts";
import { runParkctl } from "../../gateway/cli/run-parkctl.ts";
import { createLogger } from "../../shared/node/log.ts";
import { eventually } from "../support/eventually.ts";

/**
 * parkctl against the demo's own gateways (`npm start`): the demo composition runs in this process on free
 * ports with its DATA_DIR in a temporary directory, and parkctl finds each gateway by `--gateway <id>`.
 */
let dataDir: string;
let demo: RunningDemo;
const logLines: string[] = [];

beforeAll(async () => {
  dataDir = await mkdtemp(join(tmpdir(), "demo-parkctl-"));
  const sink = new Writable({
    write(chunk, _enc, cb) {
      logLines.push(...String(chunk).split("\n").filter(Boolean));
      cb();
    },
  });
  demo = await startDemo({
    env: { PORT: "0", MQTT_PORT: "0", DATA_DIR: dataDir, HOST: "127.0.0.1" },
    log: createLogger({ level: "info", format: "json", destination: sink }),
  });
});
afterAll(async () => {
  await demo?.stop();
  await rm(dataDir, { recursive: true, force: true });
});

type Run = { env?: Record<string, string | undefined>; user?: string };

async function parkctl(argv: string[], o: Run = {}) {
  let stdout = "";
  let stderr = "";
  const code = await runParkctl(argv, {
    stdout: { write: (t) => (stdout += t), isTTY: false },
    stderr: { write: (t) => (stderr += t), isTTY: false },
    stdin: { isTTY: false },
    env: o.env ?? { DATA_DIR: dataDir },
    username: () => o.user,
    cwd: () => tmpdir(),
  });
  return { code, stdout, stderr };
}

describe("parkctl --gateway against the running demo", () => {
  it("lists the devices of gw-cs-lockers, found under the demo's DATA_DIR", async () => {
    // The device map arrives from the cloud over the broker just after start-up.
    const r = await eventually(async () => {
      const run = await parkctl(["--gateway", "gw-cs-lockers", "devices", "--json"]);
      expect(run.code, run.stderr).toBe(0);
      expect((JSON.parse(run.stdout) as { devices: unknown[] }).devices.length).toBeGreaterThan(1);
      return run;
    }, 15_000);
    const out = JSON.parse(r.stdout) as {
      schema_version: number;
      devices: { alias: string; type: string }[];
    };
    expect(out.schema_version).toBe(1);
    expect(out.devices.filter((d) => d.type === "LOCKER").map((d) => d.alias)).toEqual([
      "1",
      "2",
      "3",
      "4",
      "5",
      "6",
    ]);
  });

  it("reaches every demo gateway, and the banner prints the parkctl line of each", async () => {
    const banner = demoBanner(demo);
    for (const id of ["gw-cs-lockers", "gw-ms-docks", "gw-hb-house", "gw-pk-house"]) {
      expect(banner).toContain(`DATA_DIR=${dataDir} npm run parkctl -- --gateway ${id} devices`);
      const r = await parkctl(["--gateway", id, "status", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { status: { gateway_id: string } }).status.gateway_id).toBe(id);
    }
  });

  it("records a technician action as the OS user when $USER is unset, and the daemon logs who and why", async () => {
    const r = await eventually(async () => {
      const run = await parkctl(
        [
          "--gateway",
          "gw-cs-lockers",
          "unlock",
          "2",
          "--reason",
          "bike stuck, ticket 4711",
          "--yes",
          "--json",
        ],
        { env: { DATA_DIR: dataDir }, user: "ana" },
      );
      expect(run.code, run.stderr).toBe(0);
      return run;
    }, 15_000);
    expect(JSON.parse(r.stdout)).toMatchObject({ alias: "2", action: "unlock", who: "ana" });
    const line = await eventually(() => {
      const found = logLines.find((l) => l.includes('"technician action"'));
      expect(found).toBeDefined();
      return found as string;
    });
    expect(JSON.parse(line)).toMatchObject({
      gateway_id: "gw-cs-lockers",
      device: "2",
      action: "unlock",
      who: "ana",
      why: "bike stuck, ticket 4711",
      ok: true,
    });
  });

  it("says where it looked and which gateways run there when the id is wrong (exit 3)", async () => {
    const r = await parkctl(["--gateway", "gw-cs-lockrs", "devices"]);
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(join(dataDir, "gateways", "gw-cs-lockrs", "control.sock"));
    expect(r.stderr).toContain('did you mean "gw-cs-lockers"?');
    expect(r.stderr).toMatch(/gateways running there: .*gw-ms-docks/);
  });

  it("refuses --gateway together with --socket (exit 2)", async () => {
    const r = await parkctl(["--gateway", "gw-cs-lockers", "--socket", "/tmp/x.sock", "devices"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /--gateway.*cannot be used with.*--socket|--socket.*cannot be used with.*--gateway/,
    );
  });
});

describe("the demo's log", () => {
  it("writes one line per HTTP request, with method, url, status, ms and correlation id", async () => {
    const before = logLines.length;
    const res = await fetch(`${demo.cloud.baseUrl}/healthz`, {
      headers: { "x-correlation-id": "demo-log-1" },
    });
    expect(res.status).toBe(200);
    const mine = await eventually(() => {
      const lines = logLines.slice(before).filter((l) => l.includes("demo-log-1"));
      expect(lines).toHaveLength(1);
      return lines;
    });
    expect(JSON.parse(mine[0] as string)).toMatchObject({
      msg: "request",
      method: "GET",
      url: "/healthz",
      status: 200,
      correlation_id: "demo-log-1",
    });
    expect(logLines.join("\n")).not.toMatch(/incoming request|request completed/);
  });

  it("never repeats a key on a line (a gateway's lines carry gateway_id once)", () => {
    const gatewayLines = logLines.filter((l) => l.includes('"gateway_id"'));
    expect(gatewayLines.some((l) => l.includes('"gateway started"'))).toBe(true);
    for (const line of logLines) {
      const keys = [...line.matchAll(/[{,]"([^"]+)":/g)].map((m) => m[1]);
      expect(keys.length, line).toBe(new Set(keys).size);
    }
  });
});
