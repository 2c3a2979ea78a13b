import { existsSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { hardwareReportRepository } from "../../cloud/gateway-link/hardware-report-repository.ts";
import type { DeviceView, DoctorCheck } from "../../gateway/control/control-api.ts";
import { eventually } from "../support/eventually.ts";
import { fx } from "../support/fixture-site.ts";
import { type DaemonSite, startDaemonSite } from "./support/daemon.ts";

// The daemon's wall clock a day off the cloud's, as on a controller whose RTC reset or whose NTP never
// synced: the real process under libfaketime (wall and monotonic clocks shifted; node runs under it).
// The cloud's delivery deadline is shortened to 8 s so that a command can expire while the daemon is frozen
// without the test waiting the default 30 s.

const DAY = 24 * 60 * 60 * 1000;
const DELIVERY_MS = 8_000;
const LIBFAKETIME = [
  "/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1",
  "/usr/lib/aarch64-linux-gnu/faketime/libfaketime.so.1",
  "/usr/lib/faketime/libfaketime.so.1",
  "/usr/local/lib/faketime/libfaketime.so.1",
].find((p) => existsSync(p));

describe.each([
  { word: "ahead of", faketime: "+1d", offset: DAY },
  { word: "behind", faketime: "-1d", offset: -DAY },
])("the daemon's wall clock a day $word (faketime $faketime)", ({ word, faketime, offset }) => {
  let s: DaemonSite;
  beforeAll(async () => {
    if (!LIBFAKETIME)
      throw new Error("libfaketime is not installed (Debian/Ubuntu: apt-get install faketime)");
    s = await startDaemonSite({
      store: "postgres",
      timeouts: { deliveryMs: DELIVERY_MS },
      env: { LD_PRELOAD: LIBFAKETIME, FAKETIME: faketime },
    });
    await s.ready();
  }, 120_000);
  afterAll(() => s?.stop());

  const board = () => s.site.sim.board("bus0", 1);
  const requests = (kind: string, channel: number) =>
    board().received.filter((r) => r.kind === kind && "channel" in r && r.channel === channel);
  const cloudNow = () => s.site.clock.now().getTime();
  const post = async (alias: string, command: string) => {
    const res = await s.site.api("POST", `/device/v1/devices/${fx.device("L1", alias)}/commands`, {
      command,
    });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().id as string;
  };
  const outcome = (id: string) =>
    eventually(async () => {
      const c = (await s.site.api("GET", `/device/v1/commands/${id}`)).json();
      expect(["SUCCESS", "ERROR"]).toContain(c.state.value);
      return c as { state: { value: string }; events: { name: string; timestamp: string }[] };
    }, 40_000);

  it("executes a command within its deadline, dated on the cloud's clock", async () => {
    const done = await outcome(await post("1", "lock"));
    expect(done.state.value).toBe("SUCCESS");
    expect(board().channel(1).latch).toBe("locked");
    const locked = done.events.find((e) => e.name === "RESPONSE_DEVICE_LOCKED");
    expect(Date.parse(locked?.timestamp ?? "")).toBeLessThanOrEqual(cloudNow());
    expect(Date.parse(locked?.timestamp ?? "")).toBeGreaterThan(cloudNow() - 60_000);
    // The daemon's own stamp is a day off (faketime took hold); the cloud's is its own.
    const canary = (await hardwareReportRepository(s.site.db).eventsOf("gw-a1")).at(-1);
    const stamped = Date.parse(canary?.observed_at ?? "") - Date.parse(canary?.received_at ?? "");
    expect(Math.abs(stamped - offset)).toBeLessThan(60_000);
    expect(Math.abs(Date.parse(canary?.received_at ?? "") - cloudNow())).toBeLessThan(60_000);
  });

  it("refuses a command whose deadline passed while it was frozen: the latch does not move", async () => {
    s.daemon.signal("SIGSTOP");
    const id = await post("2", "lock");
    expect((await outcome(id)).state.value).toBe("ERROR"); // the cloud's deadline, on the cloud's clock
    await sleep(2_000); // frozen a little past the deadline: what it then reads is stale by more than transit
    s.daemon.signal("SIGCONT");
    await eventually(
      async () =>
        expect((await s.daemon.control<DeviceView>("device", { alias: "2" })).last_command).toMatchObject({
          command_id: id,
          result: "ERROR",
          reason: expect.stringMatching(/after its deadline/),
        }),
      20_000,
    );
    expect(requests("lock", 2)).toHaveLength(0);
    expect(board().channel(2).latch).toBe("unlocked");
  });

  it("parkctl doctor warns about the skew with the measured offset", async () => {
    const checks = await s.daemon.control<DoctorCheck[]>("doctor");
    expect(checks.find((c) => c.check === "clock")).toMatchObject({
      status: "warn",
      detail: expect.stringMatching(new RegExp(`^the wall clock is 8640\\d\\.\\d s ${word} the cloud's`)),
      hint: expect.stringMatching(/NTP/),
    });
  });
});
