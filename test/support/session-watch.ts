import type { MqttClient } from "mqtt";
import { expect } from "vitest";

/**
 * Watches an established MQTT session; the returned check proves it survived until then: a SUBACK on
 * `topic` still comes back over the same socket, which was never closed. A broker ends the old session
 * (closing its socket) before it answers the login that took the client id over, so after that
 * answer the check cannot pass by arriving early.
 */
export function watchSession(c: MqttClient, topic: string): () => Promise<void> {
  const stream = c.stream;
  let closes = 0;
  c.on("close", () => closes++);
  return async () => {
    if (c.connected) {
      const closed = new Promise<never>((_, reject) =>
        c.once("close", () => reject(new Error("the session was closed"))),
      );
      closed.catch(() => {});
      await Promise.race([c.subscribeAsync(topic, { qos: 1 }), closed]);
    }
    expect(c.connected).toBe(true);
    expect(c.stream).toBe(stream);
    expect(closes).toBe(0);
  };
}
