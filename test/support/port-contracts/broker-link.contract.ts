import type { MqttClient } from "mqtt";
import pino from "pino";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MqttBrokerLink, type MqttBrokerLinkOptions } from "../../../gateway/adapters/mqtt/broker-mqtt.ts";
import type { BrokerLink, BrokerLinkEvents } from "../../../gateway/ports.ts";
import type {
  CommandRequest,
  DeviceMap,
  Heartbeat,
  KeysDown,
  KeysUp,
  UpMessage,
} from "../../../shared/wire/messages.ts";
import { type DownChannel, topicFor, type UpChannel } from "../../../shared/wire/topics.ts";
import { FakeClock } from "../fake-clock.ts";
import { Signal } from "../signal.ts";

/** What the cloud heard on one up channel, and a way to wait for more. */
export type Heard = { got: unknown[]; until(done: (got: unknown[]) => boolean): Promise<void> };

/** The cloud's side of the wire: it publishes to the gateway's down channels and hears its up channels. */
export type CloudEnd = {
  send(channel: DownChannel, payload: string): Promise<void>;
  /** Starts listening: what is published from now on. */
  listen(channel: UpChannel): Promise<Heard>;
};

/** A broker (or what stands in for one) to run the link against, with a gateway it admits. */
export type BrokerSite = {
  gatewayId: string;
  cloud: CloudEnd;
  /** A link of the gateway's to this site, not started. */
  link(clock: FakeClock): BrokerLink;
  close(): Promise<void>;
};

/** The cloud's end over a real broker: a connected client with the cloud's rights on this gateway's topics. */
export function mqttCloudEnd(client: MqttClient, prefix: string, gatewayId: string): CloudEnd {
  return {
    async send(channel, payload) {
      await client.publishAsync(topicFor(prefix, gatewayId, channel), payload, { qos: 1 });
    },
    async listen(channel) {
      const topic = topicFor(prefix, gatewayId, channel);
      const got: unknown[] = [];
      const signal = new Signal();
      client.on("message", (t, payload) => {
        if (t !== topic) return;
        got.push(payload.length ? JSON.parse(payload.toString("utf8")) : null);
        signal.notify();
      });
      await client.subscribeAsync(topic, { qos: 1 });
      return { got, until: (done) => signal.until(() => done(got)) };
    },
  };
}

/** The gateway's MQTT link to a real broker at `url`. */
export const mqttLink =
  (options: Omit<MqttBrokerLinkOptions, "clock" | "log">) =>
  (clock: FakeClock): BrokerLink =>
    new MqttBrokerLink({ ...options, clock, log });

const log = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

/** Everything a link emitted, by event, and a way to wait for it. */
function record(link: BrokerLink) {
  const seen = {
    connected: 0,
    commands: [] as CommandRequest[],
    acks: [] as [number[], boolean, string?][],
    maps: [] as DeviceMap[],
    keys: [] as KeysDown[],
    /** Sessions begun and commands handed on, in the order they came. */
    order: [] as ("session" | "command")[],
  };
  const signal = new Signal();
  const on = <E extends keyof BrokerLinkEvents>(e: E, fn: (...args: BrokerLinkEvents[E]) => void) =>
    link.on(e, (...args: BrokerLinkEvents[E]) => {
      fn(...args);
      signal.notify();
    });
  on("connected", () => seen.connected++);
  on("command", (c) => {
    seen.commands.push(c);
    seen.order.push("command");
  });
  on("session", () => seen.order.push("session"));
  on("ack", (seqs, resend, outboxId) =>
    seen.acks.push(outboxId === undefined ? [seqs, resend] : [seqs, resend, outboxId]),
  );
  on("deviceMap", (m) => seen.maps.push(m));
  on("keys", (k) => seen.keys.push(k));
  return { seen, until: (done: () => boolean) => signal.until(done) };
}

const at = (ms: number) => new Date(Date.UTC(2026, 0, 15, 10, 0, 0, ms)).toISOString();

const OUTBOX_ID = "0b9f1c2e-5d7a-4e3b-9c1d-2f4a6b8c0d1e";

const COMMAND: CommandRequest = {
  command_id: "cccccccc-0000-4000-8000-000000000001",
  device_id: "dddddddd-0000-4000-8000-000000000001",
  name: "unlock",
  params: {},
  issued_at: at(0),
  expires_at: "2999-01-01T00:00:00.000Z",
};

/**
 * The broker link port's contract (STYLE rule 7), what the outbox pump, the heartbeat and the command
 * executor rely on, run against each broker the gateway meets: a session that survives a disconnect,
 * `online` announced only once subscribed, validated down-messages as events (anything else dropped without
 * harm), QoS 1 up-messages that resolve on the broker's acknowledgement, heartbeats only while connected.
 */
export function brokerLinkContract(name: string, makeSite: () => Promise<BrokerSite>): void {
  describe(`broker link contract: ${name}`, () => {
    let site: BrokerSite;
    const links: BrokerLink[] = [];
    const newLink = () => {
      const link = site.link(new FakeClock());
      links.push(link);
      return link;
    };
    const started = async (link: BrokerLink) => {
      const events = record(link);
      link.start();
      await events.until(() => events.seen.connected > 0);
      return events;
    };

    beforeEach(async () => {
      site = await makeSite();
    });

    afterEach(async () => {
      for (const l of links.splice(0)) await l.stop();
      await site.close();
    });

    it("announces itself online (retained) once subscribed, and a command sent then arrives", async () => {
      const status = await site.cloud.listen("status");
      const link = newLink();
      expect(link.connected).toBe(false);
      const events = await started(link);
      expect(link.connected).toBe(true);
      expect(link.connectedSince).toEqual(expect.stringMatching(/^\d{4}-\d\d-\d\dT/));
      await status.until((got) => got.length > 0);
      expect(status.got.at(-1)).toMatchObject({ gateway_id: site.gatewayId, online: true });
      await site.cloud.send("cmd", JSON.stringify(COMMAND));
      await events.until(() => events.seen.commands.length > 0);
      expect(events.seen.commands).toEqual([COMMAND]);
    });

    it("passes validated commands, acks and device maps on, and drops what fails validation", async () => {
      const link = newLink();
      const events = await started(link);
      const send = (channel: DownChannel, body: string) => site.cloud.send(channel, body);
      const map: DeviceMap = {
        gateway_id: site.gatewayId,
        version: "v7",
        devices: [
          {
            device_id: COMMAND.device_id,
            type: "LOCKER",
            alias: "1",
            bus: { board: 1, channel: 1 },
            has_camera: false,
          },
        ],
      };
      // Published in order on each topic (QoS 1 keeps it): the bad ones arrive before the good ones.
      await send("cmd", "not json at all");
      await send("cmd", JSON.stringify({ ...COMMAND, name: "explode" }));
      await send("ack", JSON.stringify({ seqs: [-1] }));
      await send("ack", JSON.stringify({ seqs: [3], outbox_id: "not an outbox id" }));
      await send("config", JSON.stringify({ gateway_id: site.gatewayId }));
      await send("cmd", JSON.stringify(COMMAND));
      await send("ack", JSON.stringify({ seqs: [1, 2], resend: true }));
      await send("ack", JSON.stringify({ seqs: [3], outbox_id: OUTBOX_ID }));
      await send("config", JSON.stringify(map));
      await events.until(
        () => events.seen.commands.length + events.seen.acks.length + events.seen.maps.length >= 4,
      );
      expect(events.seen.commands).toEqual([COMMAND]);
      expect(events.seen.acks).toEqual([
        [[1, 2], true],
        [[3], false, OUTBOX_ID],
      ]);
      expect(events.seen.maps).toEqual([map]);
      expect(link.connected).toBe(true);
    });

    it("publishes an up-message with QoS 1: it resolves once the broker has it, and the cloud gets it as sent", async () => {
      const up = await site.cloud.listen("up");
      const link = newLink();
      await started(link);
      const msg: UpMessage = {
        type: "hardware_event",
        gateway_id: site.gatewayId,
        seq: 1,
        observed_at: at(5),
        device_id: null,
        source: "bus0/1/2",
        event: "door_opened",
        detail: "",
      };
      await link.publishUp(msg);
      await up.until((got) => got.length > 0);
      expect(up.got).toEqual([msg]);
    });

    it("passes this gateway's validated keys messages on, drops the rest, and reports keys only while connected", async () => {
      const reports = await site.cloud.listen("keys_report");
      const link = newLink();
      const version: KeysUp = { kind: "version", gateway_id: site.gatewayId, version: 3 };
      expect(link.publishKeysReport(version)).toBe(false);
      const events = await started(link);
      const delta: KeysDown = {
        kind: "delta",
        gateway_id: site.gatewayId,
        base_version: 3,
        version: 4,
        upserts: [
          {
            card_id: "04a1b2c3d4",
            whitelist_id: "eeeeeeee-0000-4000-8000-000000000001",
            status: "ACTIVE",
            expires_at: null,
            is_master_key: false,
            location_ids: [],
            device_ids: [COMMAND.device_id],
          },
        ],
        removals: [],
      };
      const answer: KeysDown = {
        kind: "answer",
        gateway_id: site.gatewayId,
        query_id: "aaaaaaaa-0000-4000-8000-000000000001",
        card_id: "04a1b2c3d4",
        grants: [],
      };
      const send = (body: string) => site.cloud.send("keys", body);
      await send("{");
      await send(JSON.stringify({ ...delta, base_version: -1 }));
      await send(JSON.stringify({ ...delta, gateway_id: "someone-else" }));
      await send(JSON.stringify(delta));
      await send(JSON.stringify(answer));
      await events.until(() => events.seen.keys.length >= 2);
      expect(events.seen.keys).toEqual([delta, answer]);

      const query: KeysUp = {
        kind: "query",
        gateway_id: site.gatewayId,
        query_id: answer.query_id,
        card_id: "04a1b2c3d4",
        device_id: null,
      };
      expect(link.publishKeysReport(version)).toBe(true);
      expect(link.publishKeysReport(query)).toBe(true);
      await reports.until((got) => got.length >= 2);
      expect(reports.got).toEqual([version, query]);
      await link.stop();
      expect(link.publishKeysReport(version)).toBe(false);
    });

    it("sends heartbeats only while connected", async () => {
      const hb = await site.cloud.listen("hb");
      const link = newLink();
      const beat: Heartbeat = { gateway_id: site.gatewayId, sent_at: at(9), devices: [] };
      expect(link.publishHeartbeat(beat)).toBe(false);
      await started(link);
      expect(link.publishHeartbeat(beat)).toBe(true);
      await hb.until((got) => got.length > 0);
      expect(hb.got).toEqual([beat]);
      await link.stop();
      expect(link.publishHeartbeat(beat)).toBe(false);
    });

    it("says offline when stopped; its session outlives the connection, so a command sent meanwhile arrives on return, after the session began", async () => {
      const status = await site.cloud.listen("status");
      const first = newLink();
      await started(first);
      await first.stop();
      expect(first.connected).toBe(false);
      await status.until((got) => got.some((s) => (s as { online?: boolean }).online === false));
      expect(status.got.at(-1)).toMatchObject({ gateway_id: site.gatewayId, online: false });

      await site.cloud.send("cmd", JSON.stringify(COMMAND));
      const events = record(newLink());
      links.at(-1)?.start();
      await events.until(() => events.seen.commands.length > 0);
      expect(events.seen.commands).toEqual([COMMAND]);
      // The executor judges a kept copy only once the session's clock is fresh (docs/decisions/clock.md).
      expect(events.seen.order).toEqual(["session", "command"]);
    });
  });
}
