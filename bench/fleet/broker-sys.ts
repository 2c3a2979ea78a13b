/**
 * What the run's Mosquitto says of itself ($SYS, published every 10 s): how many messages it dropped. A
 * client's queue (`max_queued_messages`, 1,000 by default and in the exported config) overflows when the
 * cloud's session falls behind; a dropped report waits for its gateway's resend (10 s, doubling), which
 * stalls the ramp's brake on unacknowledged reports.
 */
import { connectMqtt } from "../../cloud/gateway-link/mqtt-client.ts";

const DROPPED = "$SYS/broker/publish/messages/dropped";

/** Messages the broker has dropped since it started; null when it did not say within 15 s. */
export function brokerDropped(url: string): Promise<number | null> {
  const client = connectMqtt(url, { clientId: `fleet-sys-${process.pid}`, reconnectPeriod: 0 });
  return new Promise<number | null>((resolve) => {
    const done = (n: number | null) => {
      clearTimeout(timer);
      client.end(true);
      resolve(n);
    };
    const timer = setTimeout(() => done(null), 15_000);
    client.on("error", () => done(null));
    client.on("connect", () => client.subscribe(DROPPED, { qos: 0 }));
    client.on("message", (_topic, payload) => done(Number(payload.toString())));
  });
}
