import type { Logger } from "pino";
import type { ControlApi } from "./control-api.ts";

/**
 * The daemon's log gets every technician action that arrives over the control socket (parkctl lock,
 * unlock, test-cycle) with who, why and the outcome, beside the local_actions table and the report to the
 * cloud: whoever reads the journal sees that a person moved a latch, not only that it moved.
 */
export function logTechnicianActions(api: ControlApi, log: Logger): ControlApi {
  return {
    ...api,
    async actuate(alias, action, who, why) {
      const at = { device: alias, action, who, why };
      try {
        const r = await api.actuate(alias, action, who, why);
        log[r.ok ? "info" : "warn"]({ ...at, ok: r.ok, result: r.result, ms: r.ms }, "technician action");
        return r;
      } catch (err) {
        log.warn({ ...at, ok: false, err: messageOf(err) }, "technician action refused");
        throw err;
      }
    },
    async testCycle(alias, who) {
      const at = { device: alias, action: "test-cycle", who, why: "test cycle" };
      try {
        const r = await api.testCycle(alias, who);
        const ok = r.steps.length > 0 && r.steps.every((s) => s.ok);
        const failed = r.steps.find((s) => !s.ok);
        log[ok ? "info" : "warn"](
          { ...at, ok, result: failed ? `${failed.step}: ${failed.result}` : "ok", steps: r.steps.length },
          "technician action",
        );
        return r;
      } catch (err) {
        log.warn({ ...at, ok: false, err: messageOf(err) }, "technician action refused");
        throw err;
      }
    },
  };
}

const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));
