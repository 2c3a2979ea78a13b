import type { MqttClient } from "mqtt";
import type { Logger } from "pino";
import type { Clock } from "../../shared/time/clock.ts";
import { topicFor } from "../../shared/wire/topics.ts";
import type { Db } from "../store/db.ts";
import { deviceMapFor, watchDeviceMaps } from "./device-map.ts";
import { gatewayRepository } from "./gateway-repository.ts";

/**
 * Publishes (retained) each gateway's device map, so a gateway that connects later (or reconnects with a
 * clean session) gets it at once, and remembers which version it published.
 */
export function createDeviceMapPublisher(deps: { client: MqttClient; prefix: string; db: Db; clock: Clock }) {
  const { client, prefix, db } = deps;
  /** The map version this process last published per gateway. */
  const published = new Map<string, string>();

  async function publish(gatewayIds?: string[]): Promise<void> {
    for (const id of gatewayIds ?? (await gatewayRepository(db).allIds())) {
      const map = await deviceMapFor(db, id);
      const sent = { ...map, sent_at: deps.clock.now().toISOString() };
      await client.publishAsync(topicFor(prefix, id, "config"), JSON.stringify(sent), {
        qos: 1,
        retain: true,
      });
      published.set(id, map.version);
    }
  }

  return {
    publish,

    /**
     * A manifest applied while the cloud runs (by the CLI, or another replica) records each gateway's new
     * map version in the store; every replica publishes what changed, so running gateways take it at once.
     */
    watch(w: { clock: Clock; log: Logger; everyMs: number }) {
      return watchDeviceMaps({
        db,
        ...w,
        isPublished: (id, version) => published.get(id) === version,
        publish: (ids) => publish(ids),
      });
    },
  };
}

export type DeviceMapPublisher = ReturnType<typeof createDeviceMapPublisher>;
