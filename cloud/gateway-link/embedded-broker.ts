import net from "node:net";
import { Aedes, type AuthenticateError } from "aedes";
import type { Logger } from "pino";
import { parseTopic, type UpChannel } from "../../shared/wire/topics.ts";
import { verifySecret } from "../auth/secrets.ts";
import type { Db } from "../store/db.ts";

export type EmbeddedBroker = { port: number; close(): Promise<void> };

const UP: ReadonlySet<string> = new Set<UpChannel>(["up", "hb", "status"]);

function refused(code: 4 | 5): AuthenticateError {
  return Object.assign(new Error(code === 4 ? "bad username or password" : "not authorized"), {
    returnCode: code,
  });
}

/**
 * The embedded MQTT broker for a first run (aedes). Only the cloud and the gateways of the site
 * manifest may connect; a gateway may publish on its own up channels and subscribe to its own down
 * channels only (S29, S30). Sockets run without Nagle's algorithm.
 */
export async function startEmbeddedBroker(opts: {
  db: Db;
  log: Logger;
  port: number;
  host?: string;
  prefix: string;
  cloud: { username: string; password: string };
}): Promise<EmbeddedBroker> {
  const { db, log, prefix, cloud } = opts;
  const broker = await Aedes.createBroker({
    authenticate(client, username, password, done) {
      const secret = password?.toString("utf8") ?? "";
      if (!username) return done(refused(5), false);
      if (username === cloud.username) {
        return secret === cloud.password ? done(null, true) : done(refused(4), false);
      }
      db.selectFrom("gateways")
        .select("secret_hash")
        .where("id", "=", username)
        .executeTakeFirst()
        .then(async (gw) => {
          if (gw && (await verifySecret(secret, gw.secret_hash))) {
            (client as unknown as { gatewayId?: string }).gatewayId = username;
            return done(null, true);
          }
          log.warn({ username }, "MQTT authentication refused");
          return done(refused(4), false);
        })
        .catch(() => done(refused(4), false));
    },
    authorizePublish(client, packet, done) {
      const gatewayId = (client as unknown as { gatewayId?: string } | null)?.gatewayId;
      if (!gatewayId) return done(null); // the cloud
      const t = parseTopic(prefix, packet.topic);
      if (t && t.gatewayId === gatewayId && UP.has(t.channel)) return done(null);
      return done(new Error(`gateway ${gatewayId} may not publish to ${packet.topic}`));
    },
    authorizeSubscribe(client, sub, done) {
      const gatewayId = (client as unknown as { gatewayId?: string }).gatewayId;
      if (!gatewayId) return done(null, sub);
      const t = parseTopic(prefix, sub.topic);
      if (t && t.gatewayId === gatewayId && !UP.has(t.channel)) return done(null, sub);
      log.warn({ gateway_id: gatewayId, topic: sub.topic }, "subscription refused");
      return done(null, null); // a negative SUBACK (0x80); the connection stays up
    },
  });
  const server = net.createServer({ noDelay: true }, (socket) => broker.handle(socket));
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : opts.port;
  log.info({ port }, "embedded MQTT broker listening");
  return {
    port,
    async close() {
      await new Promise<void>((r) => broker.close(() => r()));
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
