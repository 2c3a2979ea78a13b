import type { Action, Actuator, MappedDevice, Outcome, SleepStates } from "../ports.ts";
import { strategyOf } from "./sleep-states.ts";

/**
 * The Actuator as the rest of the gateway uses it: the hardware actuator, with what each attempt shows of
 * the device's sleep. A bus device that answered at all is awake. A LOCAL_WAKEUP device that stayed silent
 * while its board still answers is taken to be in deep sleep (what a gateway started after it fell asleep
 * learns this way), and the failure says so; unless the device's state moved during the attempt (a request
 * lost while it slept, timing out after it woke). It refuses nothing itself: the command executor does (spec:
 * API commands do not reach a sleeping device), while the sweep and a technician may still try, so a
 * device that answers again is seen awake.
 */
export class SleepAwareActuator implements Actuator {
  constructor(
    private readonly inner: Actuator,
    private readonly sleep: SleepStates,
    private readonly boardAnswers: (board: number) => boolean,
  ) {}

  async run(device: MappedDevice, action: Action, opts?: { stillWanted?: () => boolean }): Promise<Outcome> {
    const changesBefore = this.sleep.changes(device.device_id);
    const o = await this.inner.run(device, action, opts);
    if (!device.bus) return o;
    if (o.sensors) {
      this.sleep.record(device, "", "hardware_event");
      return o;
    }
    const silent = o.unanswered && this.sleep.changes(device.device_id) === changesBefore;
    if (silent && strategyOf(device) === "LOCAL_WAKEUP" && this.boardAnswers(device.bus.board)) {
      this.sleep.record(device, "DEEP_SLEEP", "hardware_event");
      return { ...o, reason: this.sleep.refusal(device) ?? o.reason };
    }
    return o;
  }
}
