import { type ChildProcess, execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import type { IClientOptions, MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";
import { type ManifestInput, SiteManifest } from "../../cloud/manifest/manifest-schema.ts";
import {
  buildMosquittoExport,
  MAX_QUEUED_BYTES,
  MAX_QUEUED_MESSAGES,
  mosquittoAcl,
  mosquittoConf,
  mosquittoPasswordHash,
  parseListener,
  resolveBrokerUsers,
  verifyMosquittoPassword,
  writeMosquittoExport,
} from "../../cloud/manifest/mosquitto-export.ts";
import { sharedFilter, topicFor, wildcardFor } from "../../shared/wire/topics.ts";
import { eventually } from "../support/eventually.ts";
import { hoardQos2, rssMb as rawRssMb } from "../support/raw-mqtt.ts";
import { watchSession } from "../support/session-watch.ts";

const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const CLI = path.join(root, "cloud/manifest/cli.ts");
/** Mosquitto and mosquitto_passwd are part of the test machine (.ci/run installs them when missing). */
function required(candidates: string[]): string {
  const found = candidates.find((f) => existsSync(f));
  if (!found) throw new Error(`none of ${candidates.join(", ")} exists: install the mosquitto package`);
  return found;
}
const MOSQUITTO = required(["/usr/sbin/mosquitto", "/usr/local/sbin/mosquitto"]);
const MOSQUITTO_PASSWD = required(["/usr/bin/mosquitto_passwd", "/usr/local/bin/mosquitto_passwd"]);

const PREFIX = "mqx";
const CLOUD_PASSWORD = "cloud-broker-password";
const A = { id: "gw-a", secret: "gw-a-secret-123" };
const B = { id: "gw-b", secret: "gw-b-secret-456" };
const C = { id: "gw-c", hash: "scrypt$16384$8$1$c2FsdHNhbHQ$aGFzaGhhc2g" };

/** A small site: gateway A with a plain secret, B with secret_env, C with only a secret_hash. */
const input: ManifestInput = {
  version: 1,
  operators: [
    {
      id: "cccccccc-0000-4000-8000-000000000003",
      name: "Mosquitto test operator",
      locations: [
        {
          code: "L1",
          label: "Lockers",
          type: "BIKE_LOCKERS",
          latitude: 52.37,
          longitude: 4.89,
          gateways: [
            { id: A.id, secret: A.secret },
            { id: B.id, secret_env: "GW_B_SECRET" },
          ],
        },
        {
          code: "L2",
          label: "Docks",
          type: "BIKE_DOCKS",
          latitude: 52.36,
          longitude: 4.88,
          gateways: [{ id: C.id, secret_hash: C.hash }],
        },
      ],
    },
  ],
};
const manifest = SiteManifest.parse(input);
const env = { MQTT_PASSWORD: CLOUD_PASSWORD, GW_B_SECRET: B.secret };
const LISTENER = { host: "127.0.0.1", port: 1884 };

/** A hash mosquitto_passwd 2.0.11 wrote (`mosquitto_passwd -c -b file alice s3cret-pass`). */
const PASSWD_VECTOR = {
  password: "s3cret-pass",
  hash: "$7$101$QMiszkRET3ydbI2z$OocHmZffwIWFjvy7XRw36ttxkXL6blIWo4GZFeEfvH9dzqeI9HrGUplhicvUT3cAJxqY8QmyEuXO/kKMCgtzAg==",
};
/** The same with `-H sha512` (the pre-2.0 format), for bob / hunter2-pass. */
const SHA512_VECTOR = {
  password: "hunter2-pass",
  hash: "$6$/xe2luX0bhf4nkwU$5zQF06dyqpZe0bxyJV1NsuD5rbUeoNB2p7WRZ7sykHW4Q+e7Bc7qXZl88cLXKztt1SmzmJowXPzfzNJ7M4C+sg==",
};

/** Runs `npm run manifest -- mosquitto …` (the CLI through tsx) with a clean environment. */
function cli(args: string[], extraEnv: Record<string, string> = {}) {
  return run(process.execPath, ["--import", "tsx", CLI, ...args], {
    cwd: root,
    env: { PATH: process.env.PATH ?? "", ...extraEnv },
  });
}

function tempDir(): string {
  return mkdtempSync(path.join(os.tmpdir(), "mosquitto-export-"));
}

describe("the Mosquitto export files", () => {
  it("hashes a password exactly as mosquitto_passwd does for the same salt and iteration count", () => {
    const salt = Buffer.from("QMiszkRET3ydbI2z", "base64");
    expect(mosquittoPasswordHash(PASSWD_VECTOR.password, salt, 101)).toBe(PASSWD_VECTOR.hash);
  });

  it("writes one `user:$7$<iterations>$<12-byte salt>$<64-byte hash>` line per user, the cloud first", () => {
    const exp = buildMosquittoExport(manifest, env, {
      dir: "/srv/mqtt",
      prefix: PREFIX,
      listener: LISTENER,
      skipHashed: true,
      salt: () => Buffer.alloc(12, 7),
    });
    const lines = exp.files.passwd.split("\n");
    expect(lines.pop()).toBe("");
    expect(lines.map((l) => l.split(":")[0])).toEqual(["cloud", A.id, B.id]);
    for (const line of lines) {
      expect(line).toMatch(/^[\w.-]+:\$7\$1000\$BwcHBwcHBwcHBwcH\$[A-Za-z0-9+/]{86}==$/);
    }
    const hashOf = (user: string) =>
      lines.find((l) => l.startsWith(`${user}:`))?.slice(user.length + 1) ?? "";
    expect(verifyMosquittoPassword(CLOUD_PASSWORD, hashOf("cloud"))).toBe(true);
    expect(verifyMosquittoPassword(A.secret, hashOf(A.id))).toBe(true);
    expect(verifyMosquittoPassword(B.secret, hashOf(B.id))).toBe(true);
    expect(verifyMosquittoPassword(A.secret, hashOf(B.id))).toBe(false);
  });

  it("draws a fresh random salt for every user by default", () => {
    const users = resolveBrokerUsers(manifest, { ...env, GW_B_SECRET: A.secret }, { skipHashed: true });
    const exp = buildMosquittoExport(
      manifest,
      { ...env, GW_B_SECRET: A.secret },
      {
        dir: "/srv/mqtt",
        prefix: PREFIX,
        listener: LISTENER,
        skipHashed: true,
      },
    );
    const salts = exp.files.passwd
      .trim()
      .split("\n")
      .map((l) => l.split("$")[3]);
    expect(new Set(salts).size).toBe(users.gateways.length + 1);
  });

  it("verifies $7$ and $6$ hashes from mosquitto_passwd and rejects a wrong password or another format", () => {
    expect(verifyMosquittoPassword(PASSWD_VECTOR.password, PASSWD_VECTOR.hash)).toBe(true);
    expect(verifyMosquittoPassword("s3cret-pasS", PASSWD_VECTOR.hash)).toBe(false);
    expect(verifyMosquittoPassword(SHA512_VECTOR.password, SHA512_VECTOR.hash)).toBe(true);
    expect(verifyMosquittoPassword("hunter3-pass", SHA512_VECTOR.hash)).toBe(false);
    expect(verifyMosquittoPassword("x", C.hash)).toBe(false);
    expect(verifyMosquittoPassword("x", "$7$101$$")).toBe(false);
    expect(verifyMosquittoPassword("x", "")).toBe(false);
  });

  it("grants the cloud readwrite on every gateway topic and each gateway only its own up (write) and down (read) channels", () => {
    expect(mosquittoAcl("parking", "cloud", ["gw-a", "gw-b"])).toBe(
      [
        "# Generated by `npm run manifest -- mosquitto`; regenerate rather than edit.",
        "# Only the users below get any access; everything else (including $SYS/#) is denied.",
        "",
        "# The cloud: every gateway's up and down channels.",
        "user cloud",
        "topic readwrite parking/v1/gw/#",
        "",
        "user gw-a",
        "topic write parking/v1/gw/gw-a/up",
        "topic write parking/v1/gw/gw-a/hb",
        "topic write parking/v1/gw/gw-a/status",
        "topic write parking/v1/gw/gw-a/keys_report",
        "topic read parking/v1/gw/gw-a/cmd",
        "topic read parking/v1/gw/gw-a/ack",
        "topic read parking/v1/gw/gw-a/config",
        "topic read parking/v1/gw/gw-a/keys",
        "",
        "user gw-b",
        "topic write parking/v1/gw/gw-b/up",
        "topic write parking/v1/gw/gw-b/hb",
        "topic write parking/v1/gw/gw-b/status",
        "topic write parking/v1/gw/gw-b/keys_report",
        "topic read parking/v1/gw/gw-b/cmd",
        "topic read parking/v1/gw/gw-b/ack",
        "topic read parking/v1/gw/gw-b/config",
        "topic read parking/v1/gw/gw-b/keys",
        "",
      ].join("\n"),
    );
    expect(() => mosquittoAcl("Bad/Prefix", "cloud", [])).toThrow(/invalid topic prefix/);
  });

  it("gives each replica of the cloud a user of its own, all with MQTT_PASSWORD and the cloud's access", () => {
    const exp = buildMosquittoExport(manifest, env, {
      dir: "/srv/mqtt",
      prefix: PREFIX,
      listener: LISTENER,
      skipHashed: true,
      cloudUsers: ["cloud-1", "cloud-2"],
    });
    const lines = exp.files.passwd.trim().split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual(["cloud-1", "cloud-2", A.id, B.id]);
    for (const user of ["cloud-1", "cloud-2"])
      expect(
        verifyMosquittoPassword(
          CLOUD_PASSWORD,
          lines.find((l) => l.startsWith(`${user}:`))?.slice(user.length + 1) ?? "",
        ),
      ).toBe(true);
    expect(exp.files.acl).toContain(
      [
        "user cloud-1",
        `topic readwrite ${PREFIX}/v1/gw/#`,
        "",
        "user cloud-2",
        `topic readwrite ${PREFIX}/v1/gw/#`,
      ].join("\n"),
    );
    expect(exp.cloudUsers).toEqual(["cloud-1", "cloud-2"]);
    expect(() =>
      resolveBrokerUsers(manifest, env, { skipHashed: true, cloudUsers: ["cloud-1", A.id] }),
    ).toThrow(/gateway gw-a has the cloud's user name \(a cloud user\)/);
    expect(() => resolveBrokerUsers(manifest, env, { skipHashed: true, cloudUsers: ["c", "c"] })).toThrow(
      /named twice/,
    );
  });

  it("fails naming every gateway that has only a secret_hash, unless told to skip them", () => {
    expect(() => resolveBrokerUsers(manifest, env)).toThrow(/cannot export gateway gw-c: only a secret_hash/);
    const users = resolveBrokerUsers(manifest, env, { skipHashed: true });
    expect(users.skipped).toEqual([C.id]);
    expect(users.gateways).toEqual([
      { username: A.id, password: A.secret },
      { username: B.id, password: B.secret },
    ]);
  });

  it("requires MQTT_PASSWORD, names an unset secret_env variable and takes the cloud's name from MQTT_USERNAME", () => {
    expect(() => resolveBrokerUsers(manifest, { GW_B_SECRET: B.secret }, { skipHashed: true })).toThrow(
      /MQTT_PASSWORD is not set/,
    );
    expect(() => resolveBrokerUsers(manifest, { MQTT_PASSWORD: "p" }, { skipHashed: true })).toThrow(
      "environment variable not set for gateway gw-b (GW_B_SECRET)",
    );
    expect(resolveBrokerUsers(manifest, env, { skipHashed: true }).cloud.username).toBe("cloud");
    const named = resolveBrokerUsers(manifest, { ...env, MQTT_USERNAME: "backend" }, { skipHashed: true });
    expect(named.cloud).toEqual({ username: "backend", password: CLOUD_PASSWORD });
    expect(() => resolveBrokerUsers(manifest, { ...env, MQTT_USERNAME: A.id }, { skipHashed: true })).toThrow(
      /gateway gw-a has the cloud's user name/,
    );
    expect(() =>
      resolveBrokerUsers(manifest, { ...env, MQTT_USERNAME: "a:b" }, { skipHashed: true }),
    ).toThrow(/cannot be a Mosquitto user name/);
  });

  it("writes a mosquitto.conf whose every directive has a comment: listener, client id = user name, QoS at most 1, connection and packet limits, no anonymous, files, no Nagle, persistence, bounded in-flight and queues", () => {
    const conf = mosquittoConf({ dir: "/srv/mqtt", listener: { host: "127.0.0.1", port: 1884 } });
    const lines = conf.trimEnd().split("\n");
    const directives = lines.filter((l) => l && !l.startsWith("#"));
    expect(directives).toEqual([
      "listener 1884 127.0.0.1",
      "use_username_as_clientid true",
      "max_qos 1",
      "max_connections 1000",
      "allow_anonymous false",
      "password_file /srv/mqtt/passwd",
      "acl_file /srv/mqtt/acl",
      "set_tcp_nodelay true",
      "max_packet_size 262144",
      "persistence true",
      "persistence_location /srv/mqtt/data/",
      "autosave_interval 60",
      "max_inflight_messages 20",
      "max_queued_messages 1000",
      "max_queued_bytes 33554432",
      "persistent_client_expiration 30d",
    ]);
    for (const d of directives) expect(lines[lines.indexOf(d) - 1]).toMatch(/^# /);
    expect(mosquittoConf({ dir: "/srv/mqtt", listener: LISTENER, user: "mqtt" })).toMatch(/\nuser mqtt\n$/);
    // Room for every user twice over once that exceeds the default.
    expect(mosquittoConf({ dir: "/srv/mqtt", listener: LISTENER, users: 700 })).toContain(
      "\nmax_connections 1400\n",
    );
  });

  it("parses host:port and [ipv6]:port listeners and refuses anything else", () => {
    expect(parseListener("127.0.0.1:1883")).toEqual({ host: "127.0.0.1", port: 1883 });
    expect(parseListener("[::1]:8883")).toEqual({ host: "::1", port: 8883 });
    expect(parseListener("mqtt.internal:1883")).toEqual({ host: "mqtt.internal", port: 1883 });
    for (const bad of ["1883", "127.0.0.1", "127.0.0.1:0", "127.0.0.1:70000", "::1:1883", "a b:1"]) {
      expect(() => parseListener(bad), bad).toThrow(/invalid listener/);
    }
  });

  it("writes the files and the persistence directory, the password file readable by its owner only", () => {
    const dir = tempDir();
    try {
      const exp = buildMosquittoExport(manifest, env, {
        dir,
        prefix: PREFIX,
        listener: LISTENER,
        skipHashed: true,
      });
      writeMosquittoExport(dir, exp);
      expect(statSync(path.join(dir, "passwd")).mode & 0o777).toBe(0o600);
      expect(statSync(path.join(dir, "acl")).mode & 0o777).toBe(0o644);
      expect(statSync(path.join(dir, "data")).isDirectory()).toBe(true);
      expect(readFileSync(path.join(dir, "mosquitto.conf"), "utf8")).toBe(exp.files["mosquitto.conf"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("makes the CLI fail naming the gateways that have only a secret_hash, and write nothing", async () => {
    const dir = tempDir();
    try {
      const file = path.join(dir, "site.json");
      writeFileSync(file, JSON.stringify(input));
      const out = path.join(dir, "out");
      const failed = await cli(["mosquitto", file, "--out", out], env).catch(
        (e: { code: number; stderr: string }) => e,
      );
      // The manifest and environment given cannot be exported: invalid input, parkctl's exit 6.
      expect(failed).toMatchObject({ code: 6 });
      expect((failed as { stderr: string }).stderr).toMatch(/cannot export gateway gw-c/);
      expect(existsSync(out)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("format compatibility with mosquitto_passwd", () => {
  it("verifies hashes mosquitto_passwd wrote for a known password, in both of its formats", async () => {
    const dir = tempDir();
    try {
      for (const [format, prefix] of [
        ["sha512-pbkdf2", "$7$"],
        ["sha512", "$6$"],
      ] as const) {
        const file = path.join(dir, `passwd-${format}`);
        await run(MOSQUITTO_PASSWD as string, [
          "-H",
          format,
          "-c",
          "-b",
          file,
          "someone",
          "known-password-1",
        ]);
        const hash = readFileSync(file, "utf8").trim().split(":")[1] ?? "";
        expect(hash.startsWith(prefix)).toBe(true);
        expect(verifyMosquittoPassword("known-password-1", hash)).toBe(true);
        expect(verifyMosquittoPassword("known-password-2", hash)).toBe(false);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

async function freeLoopbackPort(): Promise<number> {
  const srv = net.createServer();
  await new Promise<void>((resolve, reject) => {
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = srv.address() as AddressInfo;
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  return port;
}

function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port }, () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

type Received = { topic: string; payload: string };

describe("a real Mosquitto running the exported files", () => {
  let dir: string;
  let port: number;
  let broker: ChildProcess | undefined;
  let brokerLog = "";
  const clients: MqttClient[] = [];

  const url = () => `mqtt://127.0.0.1:${port}`;
  const options = (username: string, password: string, extra: IClientOptions = {}): IClientOptions => ({
    clientId: `${username}-${Math.random().toString(36).slice(2, 10)}`,
    username,
    password,
    reconnectPeriod: 0,
    ...extra,
  });

  /** Connects and waits for CONNACK 0. */
  async function connect(username: string, password: string, extra: IClientOptions = {}) {
    const c = connectMqtt(url(), options(username, password, extra));
    clients.push(c);
    await new Promise<void>((resolve, reject) => {
      c.once("connect", () => resolve());
      c.once("error", reject);
    });
    return c;
  }

  /** Connects expecting a refusal; the CONNACK return code. */
  function refusal(username: string, password: string): Promise<number | undefined> {
    const c = connectMqtt(url(), options(username, password));
    clients.push(c);
    return new Promise((resolve, reject) => {
      c.once("connect", () => reject(new Error(`${username} was let in`)));
      c.once("error", (err: Error & { code?: number }) => resolve(err.code));
    });
  }

  function inbox(c: MqttClient): Received[] {
    const got: Received[] = [];
    c.on("message", (topic, payload) => got.push({ topic, payload: payload.toString() }));
    return got;
  }

  /** "refused" for a SUBACK 0x80 (mqtt.js rejects), else the granted QoS. */
  function subscribe(c: MqttClient, topic: string): Promise<number | "refused"> {
    return c.subscribeAsync(topic, { qos: 1 }).then(
      (granted) => granted[0]?.qos ?? -1,
      (err: { code?: number }) => {
        if (err.code === 0x80) return "refused";
        throw err;
      },
    );
  }

  beforeAll(async () => {
    dir = tempDir();
    port = await freeLoopbackPort();
    const file = path.join(dir, "site.json");
    writeFileSync(file, JSON.stringify(input));
    const out = path.join(dir, "mosquitto");
    const args = ["mosquitto", file, "--out", out, "--prefix", PREFIX, "--listener", `127.0.0.1:${port}`];
    args.push("--skip-hashed", "--cloud-users", "cloud,cloud-2");
    // Started as root, Mosquitto switches to the 'mosquitto' user, which cannot read this temp dir.
    if (process.getuid?.() === 0) args.push("--user", "root");
    const { stdout, stderr } = await cli(args, env);
    expect(stderr).toContain("warning: gateway gw-c left out");
    expect(stdout).toContain("2 gateways and the cloud users cloud, cloud-2 written");

    broker = spawn(MOSQUITTO as string, ["-c", path.join(out, "mosquitto.conf")], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    broker.stdout?.on("data", (d: Buffer) => {
      brokerLog += d.toString();
    });
    broker.stderr?.on("data", (d: Buffer) => {
      brokerLog += d.toString();
    });
    const child = broker;
    await eventually(async () => {
      if (child.exitCode !== null) throw new Error(`mosquitto exited (${child.exitCode}):\n${brokerLog}`);
      expect(await accepts(port)).toBe(true);
    }, 10_000);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true)));
    const child = broker;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5_000);
      await exited;
      clearTimeout(timer);
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("lets the cloud subscribe to every gateway's up channel and receive gateway A's publish on its own up topic", async () => {
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    const got = inbox(cloud);
    expect(await subscribe(cloud, wildcardFor(PREFIX, "up"))).toBe(1);
    // A connects as the gateway daemon does, with its Last Will on its own status topic.
    const a = await connect(A.id, A.secret, {
      will: {
        topic: topicFor(PREFIX, A.id, "status"),
        payload: Buffer.from("offline"),
        qos: 1,
        retain: true,
      },
    });
    await a.publishAsync(topicFor(PREFIX, A.id, "up"), "from-a", { qos: 1 });
    await eventually(() =>
      expect(got).toContainEqual({ topic: topicFor(PREFIX, A.id, "up"), payload: "from-a" }),
    );
  });

  it("lets two replicas of the cloud, a user each, share the up messages as one group without ending each other", async () => {
    const group = `g${Math.random().toString(36).slice(2, 8)}`;
    const one = await connect("cloud", CLOUD_PASSWORD, { clientId: "cloud" });
    const two = await connect("cloud-2", CLOUD_PASSWORD, { clientId: "cloud" });
    const [got1, got2] = [inbox(one), inbox(two)];
    for (const c of [one, two])
      expect(await subscribe(c, sharedFilter(group, wildcardFor(PREFIX, "up")))).toBe(1);
    const a = await connect(A.id, A.secret);
    for (let i = 0; i < 4; i++) await a.publishAsync(topicFor(PREFIX, A.id, "up"), `m${i}`, { qos: 1 });
    await eventually(() => expect(got1.length + got2.length).toBe(4));
    expect(got1.length).toBe(2);
    expect(got2.length).toBe(2);
    expect([one.connected, two.connected]).toEqual([true, true]);
  });

  it("never delivers gateway A's publish on gateway B's up topic", async () => {
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    const got = inbox(cloud);
    await subscribe(cloud, wildcardFor(PREFIX, "up"));
    const a = await connect(A.id, A.secret);
    await a.publishAsync(topicFor(PREFIX, B.id, "up"), "forged-by-a", { qos: 1 });
    await a.publishAsync(topicFor(PREFIX, A.id, "up"), "after-the-forgery", { qos: 1 });
    // Same connection, same QoS: once the second has arrived, the first would have too.
    await eventually(() => expect(got.map((m) => m.payload)).toContain("after-the-forgery"));
    expect(got.filter((m) => m.topic === topicFor(PREFIX, B.id, "up"))).toEqual([]);
  });

  it("delivers the cloud's publish on A's cmd topic to A", async () => {
    const a = await connect(A.id, A.secret);
    const got = inbox(a);
    expect(await subscribe(a, topicFor(PREFIX, A.id, "cmd"))).toBe(1);
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    await cloud.publishAsync(topicFor(PREFIX, A.id, "cmd"), "lock", { qos: 1 });
    await eventually(() => expect(got).toEqual([{ topic: topicFor(PREFIX, A.id, "cmd"), payload: "lock" }]));
  });

  it("gives A nothing from B's cmd topic, `#` or `$SYS/#` (Mosquitto's acl_file drops them at delivery, it does not refuse the SUBACK)", async () => {
    const a = await connect(A.id, A.secret);
    const got = inbox(a);
    const outcomes: Record<string, number | "refused"> = {};
    for (const topic of [topicFor(PREFIX, B.id, "cmd"), "#", "$SYS/#"])
      outcomes[topic] = await subscribe(a, topic);
    // Either refused or granted: what matters is that nothing arrives. (Mosquitto 2.0 grants them.)
    for (const outcome of Object.values(outcomes)) expect(["refused", 0, 1]).toContain(outcome);
    expect(await subscribe(a, topicFor(PREFIX, A.id, "cmd"))).toBe(1);
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    await cloud.publishAsync(topicFor(PREFIX, B.id, "cmd"), "for-b", { qos: 1 });
    await cloud.publishAsync(topicFor(PREFIX, A.id, "cmd"), "for-a", { qos: 1 });
    await eventually(() => expect(got.map((m) => m.payload)).toContain("for-a"));
    expect(got.filter((m) => m.topic !== topicFor(PREFIX, A.id, "cmd"))).toEqual([]);
  });

  it("keeps QoS 1 commands for an offline gateway with a persistent session until it reconnects", async () => {
    const session = { clientId: `gw-a-session-${Math.random().toString(36).slice(2, 8)}`, clean: false };
    const first = await connect(A.id, A.secret, session);
    await subscribe(first, topicFor(PREFIX, A.id, "cmd"));
    await first.endAsync();
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    await cloud.publishAsync(topicFor(PREFIX, A.id, "cmd"), "while-offline", { qos: 1 });
    const c = connectMqtt(url(), options(A.id, A.secret, session));
    clients.push(c);
    const got = inbox(c);
    await eventually(() => expect(got.map((m) => m.payload)).toEqual(["while-offline"]));
  });

  it("refuses a wrong password, A's password under B's name and the left-out gateway C with CONNACK 5", async () => {
    expect(await refusal(A.id, "not-the-secret")).toBe(5);
    expect(await refusal("cloud", A.secret)).toBe(5);
    expect(await refusal(B.id, A.secret)).toBe(5);
    expect(await refusal(C.id, "anything-at-all")).toBe(5);
    expect(await refusal("", "")).toBe(5);
  });

  it("keeps the cloud's and gateway B's sessions when gateway A logs in under their client ids (A gets its own)", async () => {
    const cloud = await connect("cloud", CLOUD_PASSWORD, { clientId: "cloud" });
    const b = await connect(B.id, B.secret, { clientId: B.id });
    const cloudIntact = watchSession(cloud, wildcardFor(PREFIX, "up"));
    const bIntact = watchSession(b, topicFor(PREFIX, B.id, "cmd"));
    // use_username_as_clientid: A is let in, but as the session `gw-a`, whatever id it gave.
    const asCloud = await connect(A.id, A.secret, { clientId: "cloud" });
    const asB = await connect(A.id, A.secret, { clientId: B.id });
    expect(await refusal("cloud", A.secret)).toBe(5);
    await cloudIntact();
    await bIntact();
    // Both of A's logins were the one session `gw-a`: the second ended the first.
    expect(asCloud.connected).toBe(false);
    expect(asB.connected).toBe(true);
  });

  it("disconnects a CONNECT that declares 200 MB from its header, without reading the body, and keeps serving", async () => {
    const pid = broker?.pid;
    if (!pid) throw new Error("the broker is not running");
    const rssMb = () =>
      Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1]) / 1024;
    const before = rssMb();
    const s = net.connect({ host: "127.0.0.1", port });
    s.on("error", () => {});
    const closedByBroker = new Promise<boolean>((resolve) => s.once("close", () => resolve(true)));
    await new Promise<void>((resolve) => s.once("connect", () => resolve()));
    // CONNECT, remaining length 200 MB (varint 80 80 80 64), then the body as fast as the socket takes it.
    s.write(Buffer.from([0x10, 0x80, 0x80, 0x80, 0x64]));
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    let done = false;
    void closedByBroker.then(() => {
      done = true;
    });
    const pump = () => {
      while (!done && sent < 200 * 1024 * 1024) {
        sent += chunk.length;
        if (!s.write(chunk)) return void s.once("drain", pump);
      }
      if (!done) s.end();
    };
    pump();
    expect(await closedByBroker).toBe(true);
    expect(sent).toBeLessThan(200 * 1024 * 1024);
    expect(rssMb() - before).toBeLessThan(20);
    expect((await connect(A.id, A.secret)).connected).toBe(true);
  });

  it("disconnects a gateway at its first QoS 2 publish (max_qos 1): 2,000 unreleased over 20 reconnects with a kept session leave the broker's memory flat", {
    timeout: 120_000,
  }, async () => {
    const pid = broker?.pid;
    if (!pid) throw new Error("the broker is not running");
    const who = { username: A.id, password: A.secret, topic: topicFor(PREFIX, A.id, "up") };
    await hoardQos2(port, who, 5, 20);
    const before = rawRssMb(pid);
    const run = await hoardQos2(port, who, 20, 100);
    const after = rawRssMb(pid);
    expect(run).toMatchObject({ sent: 2_000, pubrecs: 0, closedByBroker: 20 });
    expect(after - before, `RSS ${before.toFixed(1)} → ${after.toFixed(1)} MB`).toBeLessThan(20);
  });

  it("holds at most max_queued_messages for a gateway's session while it is away, and drops the rest", {
    timeout: 120_000,
  }, async () => {
    const cmd = topicFor(PREFIX, A.id, "cmd");
    const first = await connect(A.id, A.secret, { clean: false });
    await subscribe(first, cmd);
    await first.endAsync();
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    for (let i = 0; i < 1_100; i++) await cloud.publishAsync(cmd, `q${i}`, { qos: 1 });
    const back = connectMqtt(url(), options(A.id, A.secret, { clean: false }));
    clients.push(back);
    const got = inbox(back);
    await new Promise<void>((r) => back.once("connect", () => r()));
    await eventually(() => expect(got.length).toBeGreaterThanOrEqual(1_000));
    // Whatever was queued has come before this, published once the queue had room again.
    await eventually(async () => {
      await cloud.publishAsync(cmd, "after", { qos: 1 });
      expect(got.at(-1)?.payload).toBe("after");
    });
    const queued = got.filter((m) => m.payload !== "after").map((m) => m.payload);
    expect(queued).toEqual(Array.from({ length: MAX_QUEUED_MESSAGES }, (_, i) => `q${i}`));
    // Leave no session behind for the tests after this one.
    await back.endAsync();
    await (await connect(A.id, A.secret, { clean: true })).endAsync();
  });

  it("holds at most max_queued_bytes for a gateway's session while it is away", {
    timeout: 120_000,
  }, async () => {
    const cmd = topicFor(PREFIX, A.id, "cmd");
    const first = await connect(A.id, A.secret, { clean: false });
    await subscribe(first, cmd);
    await first.endAsync();
    const cloud = await connect("cloud", CLOUD_PASSWORD);
    const size = 200 * 1024;
    // 40 MB: 200 messages, well under the message limit, over the byte limit.
    for (let i = 0; i < 200; i++)
      await cloud.publishAsync(cmd, Buffer.alloc(size, 0x61 + (i % 26)), { qos: 1 });
    const back = connectMqtt(url(), options(A.id, A.secret, { clean: false }));
    clients.push(back);
    const got = inbox(back);
    await new Promise<void>((r) => back.once("connect", () => r()));
    await eventually(async () => {
      await cloud.publishAsync(cmd, "after", { qos: 1 });
      expect(got.at(-1)?.payload).toBe("after");
    });
    const queued = got.filter((m) => m.payload !== "after");
    // Mosquitto queues while it holds less than the limit, so the last one may go over.
    expect(queued.length).toBe(Math.ceil(MAX_QUEUED_BYTES / size));
    await back.endAsync();
    await (await connect(A.id, A.secret, { clean: true })).endAsync();
  });
});
