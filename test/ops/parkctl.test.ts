import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pino from "pino";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_SOCKET, unreachableHint } from "../../gateway/cli/discover.ts";
import { runParkctl } from "../../gateway/cli/run-parkctl.ts";
import type {
  ActuationResult,
  CardKeysView,
  ControlApi,
  DeviceView,
  DoctorCheck,
  GatewayStatus,
  OutboxView,
  SerialProbe,
} from "../../gateway/control/control-api.ts";
import { type ControlServer, startControlServer } from "../../gateway/control/control-server.ts";

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });
const ESC = "\u001b";

const STATUS: GatewayStatus = {
  gateway_id: "gw-north",
  version: "0.1.0",
  uptime_s: 3725,
  now: "2026-01-15T10:00:00.000Z",
  broker: { url: "mqtt://broker.example:1883", connected: true, since: "2026-01-15T09:00:00.000Z" },
  buses: [
    {
      name: "locks",
      path: "/dev/ttyUSB0",
      open: true,
      boards: [
        { addr: 1, reachable: true, last_seen: "2026-01-15T09:59:59.000Z" },
        { addr: 2, reachable: true, last_seen: "2026-01-15T09:59:59.000Z" },
        { addr: 3, reachable: false, last_seen: null },
      ],
    },
  ],
  readers: [{ id: "reader-door", path: "/dev/ttyACM0", open: true, last_seen: "2026-01-15T09:58:00.000Z" }],
  outbox: { pending: 2, oldest_age_s: 75 },
  devices: 2,
  keys: { version: 42, grants: 1200 },
};

const LOCKER: DeviceView = {
  device_id: "11111111-1111-4111-8111-111111111111",
  alias: "locker-12",
  type: "locker",
  bus: "locks",
  board: 1,
  channel: 12,
  reachable: true,
  latch: "locked",
  door_open: false,
  item_present: true,
  read_at: "2026-01-15T10:00:00.000Z",
  last_command: { name: "unlock", result: "SUCCESS", at: "2026-01-15T08:00:00.000Z" },
};
const DOOR: DeviceView = {
  ...LOCKER,
  device_id: "22222222-2222-4222-8222-222222222222",
  alias: "door-north",
  type: "door",
  bus: null,
  board: null,
  channel: null,
  reachable: false,
  latch: null,
  door_open: null,
  item_present: null,
  last_command: null,
};
/** A LOCAL_WAKEUP locker in deep sleep (only `device` knows it, so the `devices` list stays as it is). */
const SLEEPER: DeviceView = {
  ...LOCKER,
  device_id: "33333333-3333-4333-8333-333333333333",
  alias: "locker-13",
  channel: 13,
  power_save: { strategy: "LOCAL_WAKEUP", sleep_state: "DEEP_SLEEP" },
};
const OUTBOX: OutboxView = {
  pending: 2,
  oldest_age_s: 75,
  rows: [
    { seq: 41, type: "tap", age_s: 75 },
    { seq: 42, type: "state_change", age_s: 3 },
  ],
};
const KEYS: CardKeysView = {
  card_id: "04a1b2c3d4",
  version: 42,
  grants: [
    {
      whitelist_id: "33333333-3333-4333-8333-333333333333",
      status: "ACTIVE",
      expires_at: "2026-01-01T00:00:00.000Z",
      is_master_key: false,
      location_ids: ["44444444-4444-4444-8444-444444444444"],
      devices: ["door-north"],
      state: "expired",
    },
  ],
};
const PROBE: SerialProbe[] = [
  {
    bus: "locks",
    path: "/dev/ttyUSB0",
    open: true,
    boards: [
      { addr: 1, ok: true, firmware: "2.4.1", channels: 24, error: null },
      { addr: 3, ok: false, firmware: null, channels: null, error: "no answer in 200 ms" },
    ],
  },
];
const PASS: DoctorCheck = { check: "broker", status: "pass", detail: "connected for 1h", hint: "" };
const WARN: DoctorCheck = {
  check: "clock",
  status: "warn",
  detail: "NTP not synchronised",
  hint: "check timedatectl timesync-status",
};
const FAIL: DoctorCheck = {
  check: "serial",
  status: "fail",
  detail: "board 3 on locks does not answer",
  hint: "check the bus cable and the board's power",
};

type Calls = { method: string; args: unknown[] }[];
const state = {
  calls: [] as Calls,
  actuation: { ok: true, result: "SUCCESS", latch: "unlocked", ms: 420 } as ActuationResult,
  doctor: [PASS] as DoctorCheck[],
  statusError: null as Error | null,
};

/** A real daemon answers after some I/O; so does the fake. */
const someIo = () => new Promise((r) => setImmediate(r));

const api: ControlApi = {
  status: async () => {
    await someIo();
    state.calls.push({ method: "status", args: [] });
    if (state.statusError) throw state.statusError;
    return STATUS;
  },
  devices: async () => [LOCKER, DOOR],
  device: async (alias) => {
    await someIo();
    state.calls.push({ method: "device", args: [alias] });
    return [LOCKER, DOOR, SLEEPER].find((d) => d.alias === alias) ?? null;
  },
  actuate: async (...args) => {
    await someIo();
    state.calls.push({ method: "actuate", args });
    return state.actuation;
  },
  testCycle: async (alias, who) => {
    await someIo();
    state.calls.push({ method: "testCycle", args: [alias, who] });
    const ok = state.actuation.ok;
    return {
      alias,
      steps: [
        { step: "unlock", ok: true, result: "SUCCESS", latch: "unlocked", ms: 400 },
        { step: "status", ok: true, result: "unlocked", latch: "unlocked", ms: 20 },
        { step: "lock", ok, result: ok ? "SUCCESS" : "JAMMED", latch: ok ? "locked" : "unlocked", ms: 380 },
        { step: "status", ok, result: ok ? "locked" : "unlocked", latch: ok ? "locked" : "unlocked", ms: 21 },
      ],
    };
  },
  outbox: async () => OUTBOX,
  keys: async (card) => {
    await someIo();
    state.calls.push({ method: "keys", args: [card] });
    return { ...KEYS, card_id: card };
  },
  probeSerial: async () => PROBE,
  doctor: async () => state.doctor,
};

let dir: string;
let sock: string;
let server: ControlServer;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "parkctl-"));
  sock = join(dir, "control.sock");
  server = await startControlServer({ path: sock, api, log });
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  state.calls = [];
  state.actuation = { ok: true, result: "SUCCESS", latch: "unlocked", ms: 420 };
  state.doctor = [PASS];
  state.statusError = null;
});

type RunOpts = {
  /** The operating system's user name (default: none, so the environment decides). */
  username?: string;
  cwd?: string;
  tty?: boolean;
  stdinTTY?: boolean;
  env?: Record<string, string | undefined>;
  answer?: string;
  socket?: string | null;
};

/** Runs parkctl in-process; by default as a script would: no terminal anywhere, --socket to the test daemon. */
async function parkctl(argv: string[], o: RunOpts = {}) {
  let stdout = "";
  let stderr = "";
  const prompts: string[] = [];
  const socketArgs = o.socket === null ? [] : ["--socket", o.socket ?? sock];
  const code = await runParkctl([...socketArgs, ...argv], {
    stdout: { write: (t) => (stdout += t), isTTY: o.tty ?? false },
    stderr: { write: (t) => (stderr += t), isTTY: o.tty ?? false },
    stdin: {
      isTTY: o.stdinTTY ?? false,
      question: (p) => {
        prompts.push(p);
        return Promise.resolve(o.answer ?? "");
      },
    },
    env: o.env ?? { USER: "tech1", TERM: "xterm-256color" },
    username: () => o.username,
    cwd: () => o.cwd ?? dir,
  });
  return { code, stdout, stderr, prompts };
}

function json(stdout: string): Record<string, unknown> {
  return JSON.parse(stdout) as Record<string, unknown>;
}

describe("parkctl read commands", () => {
  it("status prints the gateway, broker, outbox, bus and reader tables", async () => {
    const r = await parkctl(["status"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^gateway +gw-north \(version 0\.1\.0\)$/m);
    expect(r.stdout).toMatch(/^uptime +1h 2m$/m);
    expect(r.stdout).toMatch(
      /^broker +connected to mqtt:\/\/broker\.example:1883 since 2026-01-15T09:00:00\.000Z$/m,
    );
    expect(r.stdout).toMatch(/^outbox +2 pending, oldest 1m 15s$/m);
    expect(r.stdout).toMatch(/^BUS +PATH +OPEN +BOARDS REACHABLE +UNREACHABLE$/m);
    expect(r.stdout).toMatch(/^locks +\/dev\/ttyUSB0 +yes +2\/3 +3$/m);
    expect(r.stdout).toMatch(/^reader-door +\/dev\/ttyACM0 +yes +2026-01-15T09:58:00\.000Z$/m);
    expect(r.stdout).toMatch(/^key cache +version 42, 1200 grants$/m);
  });

  it("keys <card> passes the card as typed and prints its grants, and --json the view", async () => {
    const r = await parkctl(["keys", "04:A1:B2:C3:D4"]);
    expect(r.code).toBe(0);
    expect(state.calls.filter((c) => c.method === "keys")).toEqual([
      { method: "keys", args: ["04:A1:B2:C3:D4"] },
    ]);
    expect(r.stdout).toMatch(/^key version +42$/m);
    expect(r.stdout).toMatch(/^WHITELIST +STATE +EXPIRES +MASTER +LOCATIONS +DEVICES$/m);
    expect(r.stdout).toMatch(
      /^33333333-3333-4333-8333-333333333333 +expired +2026-01-01T00:00:00\.000Z +no +1 +door-north$/m,
    );
    const j = await parkctl(["keys", "04a1b2c3d4", "--json"]);
    expect(json(j.stdout)).toEqual({ schema_version: 1, keys: KEYS });
  });

  it("status --json prints the daemon's status under schema_version 1", async () => {
    const r = await parkctl(["status", "--json"]);
    expect(r.code).toBe(0);
    expect(json(r.stdout)).toEqual({ schema_version: 1, status: STATUS });
  });

  it("devices prints one aligned row per device with dashes for unknowns", async () => {
    const r = await parkctl(["devices"]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(3);
    expect(lines[0]).toMatch(/^ALIAS +TYPE +BUS +BOARD +CH +REACHABLE +LATCH +DOOR +ITEM +LAST COMMAND$/);
    expect(lines[1]).toMatch(
      /^locker-12 +locker +locks +1 +12 +yes +locked +closed +yes +unlock SUCCESS at 2026-01-15T08:00:00\.000Z$/,
    );
    expect(lines[2]).toMatch(/^door-north +door +- +- +- +no +- +- +- +-$/);
    expect(lines[1]?.indexOf("locker ")).toBe(lines[0]?.indexOf("TYPE"));
  });

  it("devices --json lists every device under schema_version 1", async () => {
    const r = await parkctl(["--json", "devices"]);
    expect(json(r.stdout)).toEqual({ schema_version: 1, devices: [LOCKER, DOOR] });
  });

  it("device <alias> prints the device's fields, and --json the device", async () => {
    const r = await parkctl(["device", "locker-12"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^device id +11111111-1111-4111-8111-111111111111$/m);
    expect(r.stdout).toMatch(/^wiring +bus locks board 1 channel 12$/m);
    expect(r.stdout).toMatch(/^latch +locked$/m);
    const j = await parkctl(["device", "locker-12", "--json"]);
    expect(json(j.stdout)).toEqual({ schema_version: 1, device: LOCKER });
  });

  it("device <alias> shows a power-saving device's sleep beside its reachability", async () => {
    const r = await parkctl(["device", "locker-13"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^reachable +yes \(deep sleep\)$/m);
    expect(r.stdout).toMatch(/^power save +LOCAL_WAKEUP, deep sleep$/m);
    expect((await parkctl(["device", "locker-12"])).stdout).toMatch(/^power save +-$/m);
    const j = await parkctl(["device", "locker-13", "--json"]);
    expect(json(j.stdout)).toEqual({ schema_version: 1, device: SLEEPER });
  });

  it("outbox prints the pending count and one row per event, and --json the view", async () => {
    const r = await parkctl(["outbox"]);
    expect(r.stdout).toMatch(/^pending +2$/m);
    expect(r.stdout).toMatch(/^oldest +1m 15s$/m);
    expect(r.stdout).toMatch(/^SEQ +TYPE +AGE$/m);
    expect(r.stdout).toMatch(/^41 +tap +1m 15s$/m);
    expect(r.stdout).toMatch(/^42 +state_change +3s$/m);
    expect(json((await parkctl(["outbox", "--json"])).stdout)).toEqual({ schema_version: 1, outbox: OUTBOX });
  });

  it("serial probe prints one row per board with its error, and --json the buses", async () => {
    const r = await parkctl(["serial", "probe"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^BUS +PATH +OPEN +ADDR +OK +FIRMWARE +CHANNELS +ERROR$/m);
    expect(r.stdout).toMatch(/^locks +\/dev\/ttyUSB0 +yes +1 +yes +2\.4\.1 +24 +-$/m);
    expect(r.stdout).toMatch(/^locks +\/dev\/ttyUSB0 +yes +3 +no +- +- +no answer in 200 ms$/m);
    expect(json((await parkctl(["serial", "probe", "--json"])).stdout)).toEqual({
      schema_version: 1,
      buses: PROBE,
    });
  });
});

describe("parkctl lock, unlock and test-cycle", () => {
  it("unlock --yes passes alias, action, who ($SUDO_USER first) and reason to the daemon", async () => {
    const r = await parkctl(["unlock", "locker-12", "--reason", "bike stuck", "--yes"], {
      env: { USER: "root", SUDO_USER: "ana" },
    });
    expect(r.code).toBe(0);
    expect(state.calls.filter((c) => c.method === "actuate")).toEqual([
      { method: "actuate", args: ["locker-12", "unlock", "ana", "bike stuck"] },
    ]);
    expect(r.stdout).toMatch(/^result +ok \(SUCCESS\)$/m);
    expect(r.stdout).toMatch(/^latch +unlocked$/m);
  });

  it("lock records --who over the environment and prints JSON with who, reason and result", async () => {
    const r = await parkctl(["lock", "locker-12", "-r", "ticket 4711", "--who", "bob", "-y", "--json"]);
    expect(r.code).toBe(0);
    expect(state.calls.find((c) => c.method === "actuate")?.args).toEqual([
      "locker-12",
      "lock",
      "bob",
      "ticket 4711",
    ]);
    expect(json(r.stdout)).toEqual({
      schema_version: 1,
      alias: "locker-12",
      action: "lock",
      who: "bob",
      reason: "ticket 4711",
      result: state.actuation,
    });
  });

  it("refuses unlock without --yes when stdin is not a terminal: exit 2 and nothing sent", async () => {
    const r = await parkctl(["unlock", "locker-12", "--reason", "bike stuck"], { stdinTTY: false });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("stdin is not a terminal; add --yes");
    expect(r.prompts).toEqual([]);
    expect(state.calls).toEqual([]);
  });

  it("asks on a terminal and unlocks only after a yes", async () => {
    const yes = await parkctl(["unlock", "locker-12", "--reason", "bike stuck"], {
      stdinTTY: true,
      answer: "y",
    });
    expect(yes.code).toBe(0);
    expect(yes.prompts).toHaveLength(1);
    expect(yes.prompts[0]).toContain(
      'unlock locker-12 (locker, now locked) as tech1, reason "bike stuck"? [y/N]',
    );
    expect(state.calls.filter((c) => c.method === "actuate")).toHaveLength(1);

    state.calls = [];
    const no = await parkctl(["unlock", "locker-12", "--reason", "bike stuck"], {
      stdinTTY: true,
      answer: "n",
    });
    expect(no.code).toBe(2);
    expect(no.stderr).toContain("not confirmed; nothing was done");
    expect(state.calls.filter((c) => c.method === "actuate")).toEqual([]);
  });

  it("exits 2 when --reason is missing or blank", async () => {
    const missing = await parkctl(["lock", "locker-12", "--yes"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("--reason");
    const blank = await parkctl(["lock", "locker-12", "--yes", "--reason", "  "]);
    expect(blank.code).toBe(2);
    expect(state.calls).toEqual([]);
  });

  it("exits 4 for an unknown alias without actuating anything", async () => {
    const r = await parkctl(["unlock", "locker-99", "--reason", "x", "--yes"]);
    expect(r.code).toBe(4);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain('no device with alias "locker-99"');
    expect(state.calls.map((c) => c.method)).toEqual(["device"]);
    expect((await parkctl(["device", "locker-99"])).code).toBe(4);
  });

  it("exits 5 when the device did not reach the state, saying so on stderr", async () => {
    state.actuation = { ok: false, result: "JAMMED", latch: "locked", ms: 3000 };
    const r = await parkctl(["unlock", "locker-12", "--reason", "x", "--yes"]);
    expect(r.code).toBe(5);
    expect(r.stdout).toMatch(/^result +FAILED \(JAMMED\)$/m);
    expect(r.stderr).toContain("unlock locker-12 failed: JAMMED (latch is locked)");
  });

  it("test-cycle prints each timed step and exits 0 when all pass, 5 when one fails", async () => {
    const r = await parkctl(["test-cycle", "locker-12", "--yes"]);
    expect(r.code).toBe(0);
    expect(state.calls.find((c) => c.method === "testCycle")?.args).toEqual(["locker-12", "tech1"]);
    expect(r.stdout).toMatch(/^STEP +OK +RESULT +LATCH +MS$/m);
    expect(r.stdout).toMatch(/^unlock +yes +SUCCESS +unlocked +400$/m);
    expect(r.stdout).toMatch(/^lock +yes +SUCCESS +locked +380$/m);

    state.actuation = { ok: false, result: "JAMMED", latch: "unlocked", ms: 0 };
    const failed = await parkctl(["test-cycle", "locker-12", "--yes", "--json"]);
    expect(failed.code).toBe(5);
    const j = json(failed.stdout);
    expect(j).toMatchObject({ schema_version: 1, alias: "locker-12", who: "tech1", ok: false });
    expect(j.steps).toHaveLength(4);
    expect(failed.stderr).toContain("failed at lock: JAMMED");
  });

  it("refuses test-cycle without --yes when stdin is not a terminal", async () => {
    const r = await parkctl(["test-cycle", "locker-12"]);
    expect(r.code).toBe(2);
    expect(state.calls).toEqual([]);
  });
});

describe("parkctl doctor", () => {
  it("prints each check as PASS/WARN/FAIL with the hint of every non-passing one, exit 0 on warnings", async () => {
    state.doctor = [PASS, WARN];
    const r = await parkctl(["doctor"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^PASS +daemon +answering on .*control\.sock$/m);
    expect(r.stdout).toMatch(/^PASS +broker +connected for 1h$/m);
    expect(r.stdout).toMatch(
      /^WARN +clock +NTP not synchronised\n +hint: check timedatectl timesync-status$/m,
    );
    expect(r.stdout).toContain("2 pass, 1 warn, 0 fail");
  });

  it("exits 6 when a check fails and reports ok: false in JSON", async () => {
    state.doctor = [PASS, WARN, FAIL];
    const r = await parkctl(["doctor"]);
    expect(r.code).toBe(6);
    expect(r.stdout).toMatch(/^FAIL +serial +board 3 on locks does not answer\n +hint: check the bus cable/m);
    const j = await parkctl(["doctor", "--json"]);
    expect(j.code).toBe(6);
    expect(json(j.stdout)).toMatchObject({
      schema_version: 1,
      ok: false,
      checks: [{ check: "daemon" }, PASS, WARN, FAIL],
    });
  });

  it("reports an unreachable daemon as a failed check with a hint and exits 3", async () => {
    const r = await parkctl(["doctor"], { socket: join(dir, "absent.sock") });
    expect(r.code).toBe(3);
    expect(r.stdout).toMatch(/^FAIL +daemon +the gateway daemon is not running/m);
    expect(r.stdout).toContain("hint: start it: systemctl start parking-gateway");
  });
});

describe("parkctl config validate", () => {
  const good = {
    gateway_id: "gw-north",
    secret_file: "/etc/parking-gateway/secret",
    broker: { url: "mqtt://broker.example:1883" },
    state_dir: "/var/lib/parking-gateway",
    control_socket: "/run/parking-gateway/control.sock",
    buses: [{ name: "locks", path: "/dev/ttyUSB0", boards: [1, 2] }],
  };

  it("accepts a good file without a daemon, exit 0", async () => {
    const file = join(dir, "good.json");
    await writeFile(file, JSON.stringify(good));
    const r = await parkctl(["config", "validate", file], { socket: join(dir, "absent.sock") });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`valid: ${file}`);
    expect(r.stdout).not.toContain("FAIL");
    const j = await parkctl(["config", "validate", file, "--json"]);
    expect(json(j.stdout)).toMatchObject({ schema_version: 1, file, valid: true, problems: [] });
  });

  it("reports every problem of a bad YAML file by key path and exits 6", async () => {
    const file = join(dir, "bad.yaml");
    await writeFile(
      file,
      [
        "gateway_id: 'bad id!'",
        "secret: s3cret-password",
        "broker:",
        "  url: http://broker",
        "state_dir: /var/lib/parking-gateway",
        "buses:",
        "  - name: locks",
        "    path: /dev/ttyUSB0",
        "    boards: []",
        "colour: blue",
      ].join("\n"),
    );
    const r = await parkctl(["config", "validate", file]);
    expect(r.code).toBe(6);
    expect(r.stdout).toContain(`invalid: ${file}`);
    expect(r.stdout).toMatch(/FAIL +gateway_id: letters, digits/);
    expect(r.stdout).toMatch(/FAIL +broker\.url: must be an mqtt:\/\/ URL/);
    expect(r.stdout).toMatch(/FAIL +buses\.0\.boards: /);
    expect(r.stdout).toMatch(/FAIL +\(root\): .*colour/);
    const j = json((await parkctl(["config", "validate", file, "--json"])).stdout);
    expect(j.valid).toBe(false);
    expect((j.problems as { path: string }[]).map((p) => p.path)).toEqual(
      expect.arrayContaining(["gateway_id", "broker.url", "buses.0.boards"]),
    );
  });

  it("fails a config with neither secret nor secret_file, and a missing file, with exit 6", async () => {
    const file = join(dir, "nosecret.json");
    await writeFile(file, JSON.stringify({ ...good, secret_file: undefined }));
    const r = await parkctl(["config", "validate", file]);
    expect(r.code).toBe(6);
    expect(r.stdout).toContain("secret or secret_file: one is required");
    const missing = await parkctl(["config", "validate", join(dir, "nope.yaml")]);
    expect(missing.code).toBe(6);
    expect(missing.stdout).toMatch(/FAIL +\(file\): ENOENT/);
  });

  it("warns when the control socket is not where parkctl looks by default", async () => {
    const file = join(dir, "socket.json");
    await writeFile(
      file,
      JSON.stringify({ ...good, control_socket: "/var/lib/parking-gateway/control.sock" }),
    );
    const r = await parkctl(["config", "validate", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      /WARN +control_socket: the daemon will listen on \/var\/lib\/parking-gateway\/control\.sock/,
    );
  });

  it("does not warn when the socket is left to the unit's RuntimeDirectory", async () => {
    const file = join(dir, "socket-default.json");
    await writeFile(file, JSON.stringify({ ...good, control_socket: undefined }));
    const r = await parkctl(["config", "validate", file]);
    expect(r.code).toBe(0);
    expect(r.stdout).not.toMatch(/control_socket/);
  });
});

describe("parkctl exit codes and streams", () => {
  it("exits 3 with a hint on stderr and nothing on stdout when the daemon is not running", async () => {
    const r = await parkctl(["status"], { socket: join(dir, "absent.sock") });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("the gateway daemon is not running");
    expect(r.stderr).toContain("systemctl status parking-gateway");
  });

  it("exits 1 on an unexpected daemon error", async () => {
    state.statusError = new Error("database disk image is malformed");
    const r = await parkctl(["status"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("database disk image is malformed");
  });

  it("exits 2 on usage errors: unknown command, unknown option, bad --timeout, no command", async () => {
    for (const argv of [["bogus"], ["status", "--frobnicate"], ["--timeout", "soon", "status"], []]) {
      const r = await parkctl(argv);
      expect(r.code, argv.join(" ")).toBe(2);
      expect(r.stdout, argv.join(" ")).toBe("");
    }
  });

  it("exits 2 when the daemon rejects the request as bad (a reason longer than it accepts)", async () => {
    const r = await parkctl(["lock", "locker-12", "--yes", "--reason", "x".repeat(1001)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("params.why");
    expect(state.calls.filter((c) => c.method === "actuate")).toEqual([]);
  });

  it("finds the socket from $PARKCTL_SOCKET, and from --config's control_socket", async () => {
    const byEnv = await parkctl(["devices"], { socket: null, env: { PARKCTL_SOCKET: sock } });
    expect(byEnv.code).toBe(0);
    const file = join(dir, "socket-config.json");
    await writeFile(
      file,
      JSON.stringify({
        gateway_id: "gw-north",
        secret: "longenough",
        broker: { url: "mqtt://x:1883" },
        state_dir: dir,
        control_socket: sock,
      }),
    );
    const byConfig = await parkctl(["--config", file, "devices"], { socket: null, env: {} });
    expect(byConfig.code).toBe(0);
    expect(byConfig.stdout).toContain("locker-12");
  });
});

describe("parkctl colour", () => {
  const commands = [["status"], ["devices"], ["doctor"], ["serial", "probe"]];

  it("colours a terminal's output (the control for the checks below)", async () => {
    state.doctor = [PASS, WARN];
    for (const c of commands) expect((await parkctl(c, { tty: true })).stdout).toContain(ESC);
  });

  it.each([
    ["stdout is not a terminal", { tty: false }],
    ["NO_COLOR is set", { tty: true, env: { NO_COLOR: "1", TERM: "xterm" } }],
    ["TERM=dumb", { tty: true, env: { TERM: "dumb" } }],
  ])("writes no ESC byte when %s", async (_name, o: RunOpts) => {
    state.doctor = [PASS, WARN, FAIL];
    for (const c of commands) {
      const r = await parkctl(c, o);
      expect(r.stdout).not.toContain(ESC);
      expect(r.stderr).not.toContain(ESC);
    }
  });

  it("writes no ESC byte with --no-color on a terminal", async () => {
    for (const c of commands)
      expect((await parkctl([...c, "--no-color"], { tty: true })).stdout).not.toContain(ESC);
  });
});

describe("parkctl --help", () => {
  it("documents the exit codes and examples at the top level", async () => {
    const r = await parkctl(["--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("Exit codes:");
    for (const code of [
      "0  ok",
      "2  usage error",
      "3  gateway daemon unreachable",
      "4  device not found",
      "6  doctor",
    ])
      expect(r.stdout).toContain(code);
    expect(r.stdout).toContain("$ parkctl status");
  });

  it.each([
    ["status"],
    ["devices"],
    ["device"],
    ["lock"],
    ["unlock"],
    ["test-cycle"],
    ["outbox"],
    ["keys"],
    ["serial"],
    ["serial", "probe"],
    ["config"],
    ["config", "validate"],
    ["doctor"],
    ["completion"],
  ])("parkctl %s %s --help shows usage and at least one example", async (...path: string[]) => {
    const r = await parkctl([...path, "--help"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Usage: parkctl ${path.join(" ")}`);
    expect(r.stdout).toMatch(new RegExp(`Examples:\\n  \\$ parkctl ${path[0]}`));
  });

  it("prints a bash completion script that knows the commands", async () => {
    const r = await parkctl(["completion", "bash"]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("complete -F _parkctl parkctl");
    expect(r.stdout).toMatch(/unlock\) opts="--reason --who --yes/);
  });
});

describe("parkctl --version and who acted", () => {
  it("prints the package version", async () => {
    const pkg = JSON.parse(await readFile(join(import.meta.dirname, "../../package.json"), "utf8")) as {
      version: string;
    };
    const r = await parkctl(["--version"], { socket: null });
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });

  it("records the operating system's user when neither --who, $SUDO_USER, $USER nor $LOGNAME is set", async () => {
    const r = await parkctl(["lock", "locker-12", "--reason", "cron job", "--yes"], {
      env: {},
      username: "svc-tech",
    });
    expect(r.code).toBe(0);
    expect(state.calls.find((c) => c.method === "actuate")?.args).toEqual([
      "locker-12",
      "lock",
      "svc-tech",
      "cron job",
    ]);
  });
});

describe("parkctl --gateway (a gateway of the demo)", () => {
  let dataDir: string;
  let demoServer: ControlServer;
  beforeAll(async () => {
    // The demo's layout: <DATA_DIR>/gateways/<gateway_id>/control.sock.
    dataDir = await mkdtemp(join(tmpdir(), "parkctl-demo-"));
    demoServer = await startControlServer({
      path: join(dataDir, "gateways", "gw-north", "control.sock"),
      api,
      log,
    });
    await mkdir(join(dataDir, "gateways", "gw-stopped"), { recursive: true });
  });
  afterAll(async () => {
    await demoServer.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("finds the socket under $DATA_DIR/gateways/<id>/, before $PARKCTL_SOCKET", async () => {
    const r = await parkctl(["--gateway", "gw-north", "devices", "--json"], {
      socket: null,
      env: { DATA_DIR: dataDir, PARKCTL_SOCKET: join(dir, "absent.sock") },
    });
    expect(r.code, r.stderr).toBe(0);
    expect(json(r.stdout)).toEqual({ schema_version: 1, devices: [LOCKER, DOOR] });
  });

  it("says where it looked and which gateways it found when the id has no socket (exit 3)", async () => {
    const r = await parkctl(["--gateway", "gw-stopped", "status"], {
      socket: null,
      env: { DATA_DIR: dataDir },
    });
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`looked at:\n  ${join(dataDir, "gateways", "gw-stopped", "control.sock")}`);
    expect(r.stderr).toMatch(/gateways running there: .*gw-north/);
    const doctor = await parkctl(["--gateway", "gw-nort", "doctor"], {
      socket: null,
      env: { DATA_DIR: dataDir },
    });
    expect(doctor.code).toBe(3);
    expect(doctor.stdout).toMatch(/^FAIL +daemon +no control socket for gateway gw-nort/m);
    expect(doctor.stdout).toContain('did you mean "gw-north"?');
  });

  it("tells how to start the demo when no gateway runs under any data directory it knows", async () => {
    const empty = await mkdtemp(join(tmpdir(), "parkctl-empty-"));
    try {
      const r = await parkctl(["--gateway", "gw-north", "status"], {
        socket: null,
        env: { DATA_DIR: empty },
        cwd: empty,
      });
      expect(r.code).toBe(3);
      expect(r.stderr).toContain(join(empty, "gateways", "gw-north", "control.sock"));
      // The repository's own data/demo is looked at too; a demo running there would be listed instead.
      expect(r.stderr).toMatch(/start it from the repository with `npm start`|gateways running there/);
    } finally {
      await rm(empty, { recursive: true, force: true });
    }
  });

  it("points at --gateway when the default socket is absent but demo gateways run, and names PARKCTL_SOCKET", async () => {
    const hint = unreachableHint({ path: DEFAULT_SOCKET, source: "default" }, { DATA_DIR: dataDir }, dir);
    expect(hint).toContain("systemctl status parking-gateway");
    expect(hint).toMatch(/pick one with --gateway <id>: .*gw-north/);
    const r = await parkctl(["status"], {
      socket: null,
      env: { DATA_DIR: dataDir, PARKCTL_SOCKET: join(dir, "absent.sock") },
    });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`hint: PARKCTL_SOCKET=${join(dir, "absent.sock")}: is that daemon running?`);
  });

  it("refuses a malformed id and --gateway beside --socket or --config (exit 2)", async () => {
    expect((await parkctl(["--gateway", "../etc", "status"], { socket: null })).code).toBe(2);
    const both = await parkctl(["--gateway", "gw-north", "status"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/cannot be used with/);
  });
});
