import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";

export async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** Starts Mosquitto and resolves once it says it is running (it logs that after it listens). */
function spawnRunning(conf: string): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn("mosquitto", ["-c", conf], { stdio: ["ignore", "ignore", "pipe"] });
    let said = "";
    const onData = (b: Buffer) => {
      said += b.toString();
      if (!/ running$/m.test(said)) return;
      child.off("exit", onExit);
      child.stderr?.off("data", onData).resume();
      resolve(child);
    };
    const onExit = (code: number | null) =>
      reject(new Error(`mosquitto exited (${code}) before running:\n${said}`));
    // Its log is drained after that (resume), or a full pipe would block the broker.
    child.stderr?.on("data", onData);
    child.once("exit", onExit);
  });
}

/**
 * Mosquitto running `conf` (e.g. an export of the site manifest), until `stop`: its process id (to read
 * its memory) and a stop that waits for it to exit.
 */
export async function runMosquitto(conf: string) {
  const child = await spawnRunning(conf);
  return {
    pid: child.pid,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise<void>((r) => {
        child.once("exit", () => r());
        child.kill("SIGKILL");
      });
    },
  };
}

/**
 * A Mosquitto of the test's own on a free loopback port, so a test may kill -9 and restart it without
 * touching the machine's shared broker. No persistence: a restart loses everything in flight (F4).
 */
export async function startPrivateMosquitto() {
  const dir = mkdtempSync(path.join(tmpdir(), "parking-mosq-"));
  const port = await freePort();
  const conf = path.join(dir, "mosquitto.conf");
  writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      "allow_anonymous true",
      "set_tcp_nodelay true",
      "persistence false",
      "log_dest stderr",
      "",
    ].join("\n"),
  );
  let child: ChildProcess | null = null;
  const up = async () => {
    child = await spawnRunning(conf);
  };
  await up();
  return {
    url: `mqtt://127.0.0.1:${port}`,
    /** The broker's process id while it runs (a benchmark reads its memory and CPU). */
    get pid(): number | undefined {
      return child?.pid;
    },
    async kill() {
      const c = child;
      child = null;
      if (!c || c.exitCode !== null) return;
      await new Promise<void>((r) => {
        c.once("exit", () => r());
        c.kill("SIGKILL");
      });
    },
    restart: up,
    async stop() {
      await this.kill();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
