import net from "node:net";
import { Aedes, type AedesOptions, type AuthenticateError, type Client } from "aedes";
import type { Logger } from "pino";
import { systemClock } from "../../shared/node/system-clock.ts";
import type { Clock } from "../../shared/time/clock.ts";
import { createFailureLimiter } from "../auth/failure-limiter.ts";
import { verifySecret } from "../auth/secrets.ts";
import { type CloudMetrics, createCloudMetrics } from "../metrics.ts";
import type { Db } from "../store/db.ts";
import { boundQueues, type OutgoingStore } from "./bounded-queues.ts";
import { type BrokerLimits, DEFAULT_BROKER_LIMITS } from "./broker-limits.ts";
import { GATEWAY_ACL, gatewayMayPublish, gatewayMaySubscribe } from "./gateway-acl.ts";
import { gatewayRepository } from "./gateway-repository.ts";
import { FrameRefused, GatedConnection } from "./mqtt-frame-gate.ts";

export type EmbeddedBroker = {
  port: number;
  /** Where it keeps sessions, queued messages and retained ones (aedes-persistence, in memory). */
  persistence: unknown;
  /** What the broker holds for a client id now: QoS 1 messages in flight and queued, and their bytes. */
  held(clientId: string): { messages: number; bytes: number };
  close(): Promise<void>;
};

const REFUSALS = { 2: "identifier rejected", 4: "bad username or password", 5: "not authorized" } as const;

function connackError(code: keyof typeof REFUSALS): AuthenticateError {
  return Object.assign(new Error(REFUSALS[code]), { returnCode: code });
}

/** One budget per host, whether it arrives over IPv4 or as an IPv4-mapped IPv6 address. */
function sourceAddress(socket: net.Socket): string {
  const a = socket.remoteAddress ?? "unknown";
  return a.startsWith("::ffff:") ? a.slice(7) : a;
}

/** The failed-login budget is per user name per source address: gateways behind one NAT keep their own. */
function loginKey(address: string, username: string | undefined): string {
  return `${address}\u0000${username ?? ""}`;
}

/**
 * The embedded MQTT broker for a first run (aedes). Only the cloud and the gateways of the site
 * manifest may connect, each under its own client id; a gateway may do what GATEWAY_ACL allows: publish
 * on its own up channels and subscribe to its own down channels, at QoS 0 or 1 (S29, S30). Until a socket
 * has logged in it may send one CONNECT of `connectBytes` within `connectTimeoutMs`; every packet is
 * refused from its fixed header when over the limit, and a PUBLISH with QoS 2 from its first byte; a user
 * name with too many failed logins from one address is refused from there without a check; a gateway's
 * session holds at most `queuedMessages` / `queuedBytes`. Sockets run without Nagle's algorithm.
 */
export async function startEmbeddedBroker(opts: {
  db: Db;
  log: Logger;
  port: number;
  host?: string;
  prefix: string;
  /** The cloud's login; it must connect with `clientId` (default: its user name). */
  cloud: { username: string; password: string; clientId?: string };
  /** Time for the failed-login window. */
  clock?: Clock;
  limits?: Partial<BrokerLimits>;
  /** Where refusals are counted (`mqtt_refused_total`); a registry of its own when not given. */
  metrics?: CloudMetrics;
  /**
   * An earlier broker's `persistence`, to start with what it kept, as a broker with persistence on disk
   * restarts (the simulation's broker restarts); a new, empty one when not given.
   */
  persistence?: unknown;
}): Promise<EmbeddedBroker> {
  const { db, log, prefix, cloud } = opts;
  const refused = (opts.metrics ?? createCloudMetrics()).brokerRefused;
  const limits: BrokerLimits = { ...DEFAULT_BROKER_LIMITS, ...opts.limits };
  const cloudClientId = cloud.clientId ?? cloud.username;
  const failedLogins = createFailureLimiter({
    clock: opts.clock ?? systemClock,
    policy: { max: limits.loginFailures, windowMs: limits.loginWindowMs },
  });
  const addressOf = new WeakMap<Client, string>();
  /** Which gateway a logged-in client is; the cloud's own client has no entry. */
  const gatewayOf = new WeakMap<Client, string>();

  const broker = await Aedes.createBroker({
    ...(opts.persistence ? { persistence: opts.persistence as AedesOptions["persistence"] } : {}),
    connectTimeout: limits.connectTimeoutMs,
    authenticate(client, username, password, done) {
      const address = addressOf.get(client) ?? "unknown";
      const key = loginKey(address, username);
      if (failedLogins.retryAfterS(key) > 0) {
        refused.inc({ reason: "login_locked" });
        log.debug(
          { address, username },
          "MQTT login refused: too many failures for this user from this address",
        );
        return done(connackError(5), false);
      }
      const refuse = (code: keyof typeof REFUSALS, reason: string) => {
        failedLogins.fail(key);
        refused.inc({ reason: "login_failed" });
        log.warn({ address, username, client_id: client.id, reason }, "MQTT login refused");
        done(connackError(code), false);
      };
      if (!username) return refuse(5, "no user name");
      // A login with a client id that is in use ends that session (MQTT-3.1.4-2), so each user may
      // hold its own id only; checked before the secret, so a mismatch says nothing about the secret.
      const ownId = username === cloud.username ? cloudClientId : username;
      if (client.id !== ownId) return refuse(2, "client id is not the user's own");
      const secret = password?.toString("utf8") ?? "";
      if (username === cloud.username) {
        return secret === cloud.password ? done(null, true) : refuse(4, "wrong password");
      }
      if (username === cloudClientId) return refuse(5, "a gateway may not hold the cloud's client id");
      gatewayRepository(db)
        .secretHashOf(username)
        .then(async (hash) => {
          if (hash !== undefined && (await verifySecret(secret, hash))) {
            gatewayOf.set(client, username);
            return done(null, true);
          }
          return refuse(4, hash !== undefined ? "wrong password" : "unknown user");
        })
        .catch(() => refuse(4, "secret check failed"));
    },
    authorizePublish(client, packet, done) {
      const gatewayId = client ? gatewayOf.get(client) : undefined;
      if (!gatewayId) return done(null); // the cloud, or the broker itself (a Last Will)
      if (gatewayMayPublish(prefix, gatewayId, packet.topic)) return done(null);
      refused.inc({ reason: "publish_denied" });
      log.warn({ gateway_id: gatewayId, topic: packet.topic }, "publish refused: connection closed");
      // aedes closes an MQTT 3.1.1 connection on a refused publish: it has no reason code to carry.
      return done(new Error(`gateway ${gatewayId} may not publish to ${packet.topic}`));
    },
    authorizeSubscribe(client, sub, done) {
      const gatewayId = gatewayOf.get(client);
      if (!gatewayId) return done(null, sub);
      if (gatewayMaySubscribe(prefix, gatewayId, sub.topic)) {
        // Held (and persisted) at QoS 1 at most. aedes' SUBACK echoes the QoS asked for whatever this
        // returns; nothing publishes above QoS 1 to a gateway anyway.
        sub.qos = Math.min(sub.qos, GATEWAY_ACL.maxQos) as typeof sub.qos;
        return done(null, sub);
      }
      refused.inc({ reason: "subscribe_denied" });
      log.warn({ gateway_id: gatewayId, topic: sub.topic }, "subscription refused");
      return done(null, null); // a negative SUBACK (0x80); the connection stays up
    },
    // A message left out of a full session queue is not sent live either (bounded-queues.ts).
    authorizeForward(client, packet) {
      return client.id && queues.isDropped(client.id, packet) ? null : packet;
    },
  });
  // Every session but the cloud's is a gateway's (no one else can log in); the cloud's is its inbox.
  // aedes' types leave out the persistence it creates at start (aedes-persistence, in memory).
  const store = (broker as unknown as { persistence: OutgoingStore }).persistence;
  const queues = boundQueues(store, {
    limitFor: (clientId) =>
      clientId === cloudClientId ? null : { messages: limits.queuedMessages, bytes: limits.queuedBytes },
    onDrop(clientId) {
      refused.inc({ reason: "queue_full" });
      log.debug({ client_id: clientId }, "session queue full: message not queued");
    },
  });
  const onError = (client: Client, err: Error) => {
    if (err instanceof FrameRefused) {
      refused.inc({ reason: err.refusal.reason });
      log.warn({ address: addressOf.get(client), reason: err.message }, "MQTT connection closed");
    }
  };
  broker.on("connectionError", onError);
  broker.on("clientError", onError);

  const server = net.createServer({ noDelay: true }, (socket) => {
    addressOf.set(broker.handle(new GatedConnection(socket, limits)), sourceAddress(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  log.info({ port }, "embedded MQTT broker listening");
  return {
    port,
    persistence: store,
    held: (clientId) => queues.held(clientId),
    async close() {
      await new Promise<void>((r) => broker.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
