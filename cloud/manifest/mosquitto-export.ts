import { createHash, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { chmodSync, mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";
import { WIRE_VERSION } from "../../shared/wire/topics.ts";
import { DEFAULT_BROKER_LIMITS } from "../gateway-link/broker-limits.ts";
import { GATEWAY_ACL } from "../gateway-link/gateway-acl.ts";
import type { SiteManifest } from "./manifest-schema.ts";

/**
 * Exports the site manifest's MQTT users for a standalone Mosquitto 2.x broker: a password file, an ACL
 * file that confines each gateway to its own topics (as the embedded broker does), and a mosquitto.conf.
 * Everything but `writeMosquittoExport` is pure; randomness (salts) is injectable.
 */

type Env = Record<string, string | undefined>;

/** Mosquitto's salt length (SALT_LEN): mosquitto_passwd writes 12 bytes and 2.0 keeps salts in a 12-byte field. */
export const MOSQUITTO_SALT_BYTES = 12;
/** SHA-512 output; Mosquitto compares the whole 64 bytes. */
const HASH_BYTES = 64;
/**
 * PBKDF2 rounds. The broker reads the count from each line; mosquitto_passwd 2.0 writes 101, later
 * releases 1000. Mosquitto is single-threaded and runs the hash on every CONNECT, so the count is paid by
 * every client during a reconnect storm (10 000 rounds measured ~18 ms each here, 1000 about a tenth):
 * 1000 is ten times mosquitto_passwd 2.0 at a cost the broker loop can absorb.
 */
export const DEFAULT_PBKDF2_ITERATIONS = 1000;

export const PREFIX_PATTERN = /^[a-z0-9_-]+$/;

/**
 * A Mosquitto `$7$` (PBKDF2-HMAC-SHA512) hash, exactly as mosquitto_passwd writes it:
 * `$7$<iterations>$<base64 salt>$<base64 64-byte hash>` (standard base64 with padding).
 */
export function mosquittoPasswordHash(
  password: string,
  salt: Buffer,
  iterations = DEFAULT_PBKDF2_ITERATIONS,
): string {
  if (salt.length !== MOSQUITTO_SALT_BYTES) throw new Error(`salt must be ${MOSQUITTO_SALT_BYTES} bytes`);
  if (!Number.isInteger(iterations) || iterations < 1)
    throw new Error("iterations must be a positive integer");
  const hash = pbkdf2Sync(Buffer.from(password, "utf8"), salt, iterations, HASH_BYTES, "sha512");
  return `$7$${iterations}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

/**
 * Checks a password against a Mosquitto hash: `$7$` (PBKDF2-SHA512) or the older `$6$` (one round of
 * SHA-512 over password then salt). Anything else is false.
 */
export function verifyMosquittoPassword(password: string, hash: string): boolean {
  const parts = hash.split("$");
  const pw = Buffer.from(password, "utf8");
  let expected: Buffer;
  let actual: Buffer;
  if (parts.length === 5 && parts[0] === "" && parts[1] === "7") {
    const iterations = Number(parts[2]);
    if (!Number.isInteger(iterations) || iterations < 1) return false;
    const salt = Buffer.from(parts[3] ?? "", "base64");
    expected = Buffer.from(parts[4] ?? "", "base64");
    if (salt.length === 0 || expected.length !== HASH_BYTES) return false;
    actual = pbkdf2Sync(pw, salt, iterations, HASH_BYTES, "sha512");
  } else if (parts.length === 4 && parts[0] === "" && parts[1] === "6") {
    const salt = Buffer.from(parts[2] ?? "", "base64");
    expected = Buffer.from(parts[3] ?? "", "base64");
    if (salt.length === 0 || expected.length !== HASH_BYTES) return false;
    actual = createHash("sha512").update(pw).update(salt).digest();
  } else {
    return false;
  }
  return timingSafeEqual(actual, expected);
}

export type BrokerUser = { username: string; password: string };

export type BrokerUsers = {
  /** The first of `clouds`. */
  cloud: BrokerUser;
  /** The cloud's users: one per replica, each its own session (use_username_as_clientid). */
  clouds: BrokerUser[];
  /** Gateways in manifest order. */
  gateways: BrokerUser[];
  /** Gateways left out because their secret is only a `secret_hash` (with `skipHashed`). */
  skipped: string[];
};

/** Mosquitto user names may not hold ':' (the password-file separator); ACL lines end at a newline. */
function checkUsername(name: string, what: string): void {
  if (!name || /[:\s]/.test(name) || /\p{Cc}/u.test(name)) {
    throw new Error(
      `${what} ${JSON.stringify(name)} cannot be a Mosquitto user name (no ':', spaces or control characters)`,
    );
  }
}

/**
 * The broker's users: the cloud (MQTT_USERNAME, default "cloud", or `cloudUsers`, one per replica;
 * MQTT_PASSWORD, required, for each) and every gateway of the manifest with its plain secret (`secret`,
 * or `secret_env` read from `env`). A gateway with only a `secret_hash` cannot be exported (scrypt does
 * not reverse): an error naming every such gateway, or, with `skipHashed`, it is listed in `skipped`.
 */
export function resolveBrokerUsers(
  manifest: SiteManifest,
  env: Env,
  opts: { skipHashed?: boolean; cloudUsers?: readonly string[] } = {},
): BrokerUsers {
  const cloudNames = opts.cloudUsers?.length ? [...opts.cloudUsers] : [env.MQTT_USERNAME || "cloud"];
  for (const name of cloudNames)
    checkUsername(name, opts.cloudUsers?.length ? "cloud user" : "MQTT_USERNAME");
  if (new Set(cloudNames).size !== cloudNames.length) throw new Error("a cloud user is named twice");
  const cloudName = cloudNames[0] as string;
  const cloudPassword = env.MQTT_PASSWORD;
  if (!cloudPassword) throw new Error("MQTT_PASSWORD is not set: the cloud's broker password is required");

  const gateways: BrokerUser[] = [];
  const hashed: string[] = [];
  const unset: string[] = [];
  const seen = new Set<string>(cloudNames);
  for (const op of manifest.operators) {
    for (const loc of op.locations) {
      for (const gw of loc.gateways) {
        if (seen.has(gw.id)) {
          throw new Error(
            cloudNames.includes(gw.id)
              ? `gateway ${gw.id} has the cloud's user name (${gw.id === cloudName ? "MQTT_USERNAME" : "a cloud user"})`
              : `gateway ${gw.id} appears twice in the manifest`,
          );
        }
        seen.add(gw.id);
        checkUsername(gw.id, "gateway id");
        const plain = gw.secret ?? (gw.secret_env !== undefined ? env[gw.secret_env] : undefined);
        if (plain) gateways.push({ username: gw.id, password: plain });
        else if (gw.secret_env !== undefined) unset.push(`${gw.id} (${gw.secret_env})`);
        else hashed.push(gw.id);
      }
    }
  }
  if (unset.length) throw new Error(`environment variable not set for gateway ${unset.join(", ")}`);
  if (hashed.length && !opts.skipHashed) {
    throw new Error(
      `cannot export gateway ${hashed.join(", ")}: only a secret_hash is given, and a hash cannot be ` +
        "turned into Mosquitto's format; give secret_env instead, or pass --skip-hashed to leave them out",
    );
  }
  const clouds = cloudNames.map((username) => ({ username, password: cloudPassword }));
  return { cloud: clouds[0] as BrokerUser, clouds, gateways, skipped: hashed };
}

/** The password file: one `user:$7$…` line per user, the cloud first. */
export function mosquittoPasswd(
  users: readonly BrokerUser[],
  opts: { salt?: (username: string) => Buffer; iterations?: number } = {},
): string {
  const salt = opts.salt ?? (() => randomBytes(MOSQUITTO_SALT_BYTES));
  return users
    .map((u) => `${u.username}:${mosquittoPasswordHash(u.password, salt(u.username), opts.iterations)}\n`)
    .join("");
}

/**
 * The ACL file. The cloud (each of its users, when its replicas have one each) reads and writes every
 * gateway's topics; each gateway what GATEWAY_ACL allows: write its own up channels, read its own down
 * channels. Nothing else is granted, so `#`, other gateways' topics and `$SYS/#` deliver nothing (Mosquitto
 * grants the SUBACK and filters at delivery) and a refused publish is dropped.
 */
export function mosquittoAcl(
  prefix: string,
  cloudUsername: string | readonly string[],
  gatewayIds: readonly string[],
): string {
  if (!PREFIX_PATTERN.test(prefix)) throw new Error(`invalid topic prefix ${JSON.stringify(prefix)}`);
  const base = `${prefix}/${WIRE_VERSION}/gw`;
  const clouds = typeof cloudUsername === "string" ? [cloudUsername] : cloudUsername;
  const lines = [
    "# Generated by `npm run manifest -- mosquitto`; regenerate rather than edit.",
    "# Only the users below get any access; everything else (including $SYS/#) is denied.",
    "",
    "# The cloud: every gateway's up and down channels.",
    ...clouds.flatMap((name, i) => [...(i > 0 ? [""] : []), `user ${name}`, `topic readwrite ${base}/#`]),
  ];
  for (const id of gatewayIds) {
    lines.push("", `user ${id}`);
    for (const ch of GATEWAY_ACL.publish) lines.push(`topic write ${base}/${id}/${ch}`);
    for (const ch of GATEWAY_ACL.subscribe) lines.push(`topic read ${base}/${id}/${ch}`);
  }
  return `${lines.join("\n")}\n`;
}

export type Listener = { host: string; port: number };

/** `host:port` or `[ipv6]:port`. */
export function parseListener(text: string): Listener {
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(text);
  const port = Number(m?.[3]);
  const host = m?.[1] ?? m?.[2];
  if (!m || !host || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`invalid listener ${JSON.stringify(text)}: use host:port, e.g. 127.0.0.1:1883`);
  }
  return { host, port };
}

/** QoS 1 messages queued per client above those in flight (see the comment in the file). */
export const MAX_QUEUED_MESSAGES = DEFAULT_BROKER_LIMITS.queuedMessages;
/** The same in bytes. */
export const MAX_QUEUED_BYTES = DEFAULT_BROKER_LIMITS.queuedBytes;
/** QoS 1 messages in flight to one client at once (Mosquitto's default, written out). */
export const MAX_INFLIGHT_MESSAGES = 20;

/**
 * Sockets the listener accepts, logged in or not: below the usual open-file limit of 1024, so the broker
 * keeps descriptors for its own files; room for every user twice over (a reconnect may overlap the old
 * socket) when that is more.
 */
export function maxConnections(users: number): number {
  return Math.max(1000, 2 * users);
}

/** mosquitto.conf for files in `dir` (made absolute: Mosquitto resolves paths against its working directory). */
export function mosquittoConf(opts: {
  dir: string;
  listener: Listener;
  user?: string;
  users?: number;
}): string {
  const dir = path.resolve(opts.dir);
  const { host, port } = opts.listener;
  const connections = maxConnections(opts.users ?? 0);
  const lines = [
    "# Mosquitto 2.x configuration generated by `npm run manifest -- mosquitto`; regenerate rather than edit.",
    `# Run: mosquitto -c ${path.join(dir, "mosquitto.conf")}`,
    "",
    "# The one listener: TCP port and bind address. Use TLS or a private network beyond one host.",
    `listener ${port} ${host}`,
    "",
    "# (This listener) Replace each client's id with its user name: a login under a client id in use ends",
    "# that session, so no user's credentials can end the cloud's or another gateway's session.",
    "use_username_as_clientid true",
    "",
    `# (This listener) The wire uses QoS 0 and 1: a PUBLISH with QoS 2 disconnects its client (a QoS 2 message`,
    "# would be held until its sender releases it), and a subscription is granted at most QoS 1.",
    `max_qos ${GATEWAY_ACL.maxQos}`,
    "",
    `# (This listener) At most ${connections} sockets at once, logged in or not. More than 1024 needs the`,
    "# broker's open-file limit (LimitNOFILE) raised with it.",
    `max_connections ${connections}`,
    "",
    "# Every client must log in with a user name and password from password_file.",
    "allow_anonymous false",
    "",
    "# Users and their PBKDF2-SHA512 ($7$) hashes: the cloud and each gateway of the manifest.",
    `password_file ${path.join(dir, "passwd")}`,
    "",
    "# Who may publish/subscribe where: each gateway only its own topics; unlisted topics are denied.",
    `acl_file ${path.join(dir, "acl")}`,
    "",
    "# Disable Nagle's algorithm: with it on, every QoS 1 hop waits ~40-90 ms for a delayed ACK.",
    "set_tcp_nodelay true",
    "",
    `# Disconnect a client sending a packet over ${DEFAULT_BROKER_LIMITS.packetBytes / 1024} KB (header included), judged from`,
    "# its header before the body is read; the wire's largest payload, a 1000-device map, is about 140 KB.",
    `max_packet_size ${DEFAULT_BROKER_LIMITS.packetBytes}`,
    "",
    "# Keep persistent sessions, their subscriptions and queued messages across broker restarts.",
    "persistence true",
    "",
    "# Where the persistence file (mosquitto.db) lives; must be writable by the broker's user.",
    `persistence_location ${path.join(dir, "data")}${path.sep}`,
    "",
    "# Save the in-memory state every 60 s (default 1800 s), so a crash loses at most a minute of queue.",
    "autosave_interval 60",
    "",
    `# At most ${MAX_INFLIGHT_MESSAGES} QoS 1 messages in flight to one client; the rest wait in its queue.`,
    `max_inflight_messages ${MAX_INFLIGHT_MESSAGES}`,
    "",
    `# Queue at most ${MAX_QUEUED_MESSAGES} QoS 1 messages per client above those in flight, then drop new ones: what`,
    "# one client id can make the broker hold, across its connections. An offline gateway's commands go stale",
    "# within a minute (the cloud times them out), so a deep queue buys nothing; for the cloud's own session",
    "# it bounds the backlog of up messages while the cloud restarts, and gateways resend those from their",
    "# durable outbox until the cloud acknowledges them.",
    `max_queued_messages ${MAX_QUEUED_MESSAGES}`,
    "",
    `# The same in payload bytes (${MAX_QUEUED_BYTES / 1024 / 1024} MB): room for a key snapshot of ~150,000 grants.`,
    `max_queued_bytes ${MAX_QUEUED_BYTES}`,
    "",
    "# Forget the session (and queue) of a client that has not connected for 30 days, e.g. a removed gateway.",
    "persistent_client_expiration 30d",
  ];
  if (opts.user) {
    lines.push(
      "",
      "# When started as root, switch to this user (Mosquitto's default is 'mosquitto'); it must be able to",
      "# read passwd and acl and write the persistence directory.",
      `user ${opts.user}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

export type MosquittoExport = {
  files: { passwd: string; acl: string; "mosquitto.conf": string };
  cloudUsers: string[];
  /** Gateways left out (only a secret_hash, with skipHashed). */
  skipped: string[];
  gatewayIds: string[];
};

export type MosquittoExportOptions = {
  /** Output directory; the config names its files by absolute path. */
  dir: string;
  prefix: string;
  listener: Listener;
  skipHashed?: boolean;
  /** `user` line of mosquitto.conf (the broker drops root privileges to it). */
  user?: string;
  iterations?: number;
  /** Salt for a user's hash; random 12 bytes by default. */
  salt?: (username: string) => Buffer;
  /** The cloud's users, one per replica; MQTT_USERNAME (default cloud) when unset. */
  cloudUsers?: readonly string[];
};

/** All three files from a manifest and the environment (MQTT_USERNAME, MQTT_PASSWORD, secret_env vars). */
export function buildMosquittoExport(
  manifest: SiteManifest,
  env: Env,
  opts: MosquittoExportOptions,
): MosquittoExport {
  const users = resolveBrokerUsers(manifest, env, {
    skipHashed: opts.skipHashed,
    cloudUsers: opts.cloudUsers,
  });
  const gatewayIds = users.gateways.map((g) => g.username);
  return {
    files: {
      passwd: mosquittoPasswd([...users.clouds, ...users.gateways], {
        salt: opts.salt,
        iterations: opts.iterations,
      }),
      acl: mosquittoAcl(
        opts.prefix,
        users.clouds.map((c) => c.username),
        gatewayIds,
      ),
      "mosquitto.conf": mosquittoConf({
        dir: opts.dir,
        listener: opts.listener,
        user: opts.user,
        users: gatewayIds.length + users.clouds.length,
      }),
    },
    cloudUsers: users.clouds.map((c) => c.username),
    skipped: users.skipped,
    gatewayIds,
  };
}

/**
 * Writes the files into `dir` (created if missing) plus the persistence directory `dir/data`. The
 * password file is readable by its owner only.
 */
export function writeMosquittoExport(dir: string, exp: MosquittoExport): string[] {
  mkdirSync(path.join(dir, "data"), { recursive: true });
  const written: string[] = [];
  for (const [name, text] of Object.entries(exp.files)) {
    const file = path.join(dir, name);
    const mode = name === "passwd" ? 0o600 : 0o644;
    writeFileSync(file, text, { mode });
    chmodSync(file, mode); // writeFileSync's mode applies only when it creates the file
    written.push(file);
  }
  return written;
}
