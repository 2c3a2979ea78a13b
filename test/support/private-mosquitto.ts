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

async function waitForPort(port: number, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = net.createConnection({ host: "127.0.0.1", port }, () => {
        c.destroy();
        resolve(true);
      });
      c.once("error", () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > end) throw new Error(`nothing listens on 127.0.0.1:${port}`);
    await new Promise((r) => setTimeout(r, 50));
  }
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
      "",
    ].join("\n"),
  );
  let child: ChildProcess | null = null;
  const up = async () => {
    child = spawn("mosquitto", ["-c", conf], { stdio: "ignore" });
    await waitForPort(port);
  };
  await up();
  return {
    url: `mqtt://127.0.0.1:${port}`,
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
