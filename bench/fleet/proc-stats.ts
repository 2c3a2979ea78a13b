/** What /proc says about a process: CPU time, resident memory and its open-files limit (Linux only). */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";

const TICKS_PER_S = 100; // USER_HZ on Linux

/** User + system CPU seconds so far (fields 14 and 15 of /proc/<pid>/stat); NaN once it is gone. */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_S;
  } catch {
    return Number.NaN;
  }
}

export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** "soft/hard" open files, e.g. "20000/20000". */
export function nofile(pid: number | "self"): string {
  const m = /Max open files\s+(\S+)\s+(\S+)/.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
  return m ? `${m[1]}/${m[2]}` : "?";
}

/** Busy and total jiffies of the whole machine (all cores), for its load over a window. */
export function machineTicks(): { busy: number; total: number } {
  const cpu = readFileSync("/proc/stat", "utf8").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number);
  if (!cpu) return { busy: 0, total: 0 };
  const total = cpu.reduce((a, b) => a + b, 0);
  const idle = (cpu[3] ?? 0) + (cpu[4] ?? 0);
  return { busy: total - idle, total };
}

/** PostgreSQL's server processes (the shared server: other users' backends are counted too). */
export function postgresPids(): number[] {
  try {
    return execFileSync("pgrep", ["-x", "postgres"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
}

/** The load averages, as `uptime` prints them. */
export function loadAverage(): string {
  return readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
}
