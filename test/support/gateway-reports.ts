import type { Command } from "../../shared/api/command.ts";
import type { DeviceStateReport } from "../../shared/wire/messages.ts";
import type { CloudHarness } from "./cloud-harness.ts";

/** What a gateway can say about a device's sensors (the cause defaults to hardware_event). */
export type SensorReading = Partial<
  Pick<DeviceStateReport, "lock_state" | "door_open" | "item_present" | "sleep_state" | "cause" | "detail">
>;

/** A report's observation times: now, or `at` on the gateway's clock and its estimate of the cloud's. */
const observed = (h: CloudHarness, at?: string) =>
  at ? { observed_at: at, observed_cloud_at: at } : { observed_at: h.clock.now().toISOString() };

/**
 * Plays gateways reporting to the harness's cloud as if over MQTT. Each report takes the next outbox
 * sequence number, counting from `firstSeq`, unless the caller gives one.
 */
export function gatewayReports(harness: () => CloudHarness, firstSeq = 0) {
  let seq = firstSeq;
  return {
    /** Takes the next sequence number, for a report sent again under the same one. */
    nextSeq: () => ++seq,

    /** The gateway reports progress on a command: "applied", or "duplicate" for a seq already applied. */
    progress(
      gatewayId: string,
      cmd: Pick<Command, "id" | "device">,
      state: "RECEIVED" | "SUCCESS" | "ERROR",
      opts: {
        reason?: string;
        lock_state?: "LOCKED" | "UNLOCKED";
        /** The gateway refused: someone else (a card) holds the device, and the reading is theirs. */
        held_by_another?: boolean;
        seq?: number;
        device_id?: string;
        /** When the gateway observed it, on its estimate of the cloud's clock (default: now). */
        observedAt?: string;
      } = {},
    ): Promise<"applied" | "duplicate"> {
      const h = harness();
      return h.report(gatewayId, {
        type: "command_progress",
        gateway_id: gatewayId,
        seq: opts.seq ?? ++seq,
        ...observed(h, opts.observedAt),
        command_id: cmd.id,
        device_id: opts.device_id ?? cmd.device.id,
        state,
        reason: opts.reason ?? "",
        ...(opts.lock_state ? { lock_state: opts.lock_state } : {}),
        ...(opts.held_by_another ? { held_by_another: true } : {}),
      });
    },

    /** The gateway reports what a device's sensors read, outside any command (someone at the device). */
    deviceState(
      gatewayId: string,
      deviceId: string,
      reading: SensorReading,
      opts: { seq?: number; observedAt?: string } = {},
    ): Promise<"applied" | "duplicate"> {
      const h = harness();
      return h.report(gatewayId, {
        type: "device_state",
        gateway_id: gatewayId,
        seq: opts.seq ?? ++seq,
        ...observed(h, opts.observedAt),
        device_id: deviceId,
        ...reading,
      });
    },
  };
}

export type GatewayReports = ReturnType<typeof gatewayReports>;
