/**
 * What the ramp-up costs while it runs: commands to lockers of gateways already up (as in the window:
 * POST with `Prefer: wait=10`, open loop), where the CPU goes (the cloud, the simulated fleet, the broker,
 * PostgreSQL: which one limits the ramp) and when the first reports were all acknowledged.
 */
import os from "node:os";
import type { FleetStats } from "./ipc.ts";
import { commandLoad, failed, max, pct } from "./probes.ts";
import { cpuSeconds, machineTicks, postgresPids } from "./proc-stats.ts";

const postgresCpu = () => new Map(postgresPids().map((pid) => [pid, cpuSeconds(pid)]));
const f0 = (x: number) => (Number.isFinite(x) ? x.toFixed(0) : "–");
const f1 = (x: number) => (Number.isFinite(x) ? x.toFixed(1) : "–");

export function rampLoad(o: {
  base: string;
  tokens: string[];
  ratePerS: number;
  gateways: number;
  pids: { cloud: number; sim: number; broker: number };
}) {
  const t0 = performance.now();
  const cpu0 = {
    cloud: cpuSeconds(o.pids.cloud),
    sim: cpuSeconds(o.pids.sim),
    broker: cpuSeconds(o.pids.broker),
  };
  const pg0 = postgresCpu();
  const m0 = machineTicks();
  let up = 0;
  let reportsS = Number.NaN;
  const commands = commandLoad({ base: o.base, gateways: () => up, tokens: o.tokens, ratePerS: o.ratePerS });
  return {
    /** The fleet's latest counts: which gateways are up, whether every first report is acknowledged. */
    onStats(s: FleetStats): void {
      up = s.upPrefix;
      if (Number.isNaN(reportsS) && s.ready === o.gateways && s.pendingUp === 0)
        reportsS = (performance.now() - t0) / 1000;
    },
    /** Ends the commands (waits for those in flight) and says what the ramp cost, as lines to print. */
    async stop(): Promise<string[]> {
      const wallS = (performance.now() - t0) / 1000;
      const share = (pid: number, from: number) => f0((100 * (cpuSeconds(pid) - from)) / wallS);
      const cpu = `cloud ${share(o.pids.cloud, cpu0.cloud)}%, the simulated fleet ${share(o.pids.sim, cpu0.sim)}%, Mosquitto ${share(o.pids.broker, cpu0.broker)}%`;
      let pgS = 0;
      for (const [pid, end] of postgresCpu()) if (Number.isFinite(end)) pgS += end - (pg0.get(pid) ?? 0);
      const m1 = machineTicks();
      await commands.stop();
      const c = commands.tally;
      const failures = failed(c)
        ? `; ${failed(c)} failed: ${[...c.failures].map(([w, k]) => `${k}× ${w}`).join(", ")}`
        : "";
      return [
        `  ramp CPU  ${cpu}, PostgreSQL ${f0((100 * pgS) / wallS)}% of a core; the machine ` +
          `${f0((100 * (m1.busy - m0.busy)) / (m1.total - m0.total))}% busy (of ${os.availableParallelism()} cores); ` +
          `every first report acknowledged at ${f1(reportsS)} s`,
        `  ramp cmds ${c.latencies.length} SUCCESS while it ramps up (lockers of gateways already up), POST → SUCCESS ` +
          `with Prefer: wait=10 p50 ${f1(pct(c.latencies, 50))} ms, p99 ${f1(pct(c.latencies, 99))} ms, ` +
          `max ${f1(max(c.latencies))} ms${failures}`,
      ];
    },
  };
}
