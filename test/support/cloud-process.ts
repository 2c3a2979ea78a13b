import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { eventually } from "./eventually.ts";
import { freePort } from "./private-mosquitto.ts";

const root = path.resolve(import.meta.dirname, "../..");

export type CloudProcess = {
  baseUrl: string;
  child: ChildProcess;
  /** SIGKILL: the process dies mid-flight, nothing of it is flushed or closed. */
  kill(): Promise<void>;
  /** SIGTERM and its graceful stop; its data directory is removed. */
  stop(): Promise<void>;
};

/**
 * The cloud (`cloud/main.ts`) as a process of its own, configured by `env` on a free HTTP port, ready once
 * /readyz answers 200 (store reachable, broker link up). `prepare` may fill its data directory first (the
 * SQLite store is `<dataDir>/cloud.db`).
 */
export async function startCloudProcess(
  env: Record<string, string>,
  o: { prepare?: (dataDir: string) => Promise<void> } = {},
): Promise<CloudProcess> {
  const port = await freePort();
  const dataDir = mkdtempSync(path.join(tmpdir(), "parking-cloud-proc-"));
  await o.prepare?.(dataDir);
  // Only what it needs of ours: the test runner's environment holds variables of its own (BASE_URL=/).
  const inherited = { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "" };
  const child = spawn(process.execPath, ["--import", "tsx", path.join(root, "cloud/main.ts")], {
    cwd: root,
    env: {
      ...inherited,
      HOST: "127.0.0.1",
      PORT: String(port),
      DATA_DIR: dataDir,
      LOG_LEVEL: "warn",
      ...env,
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const end = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  const baseUrl = `http://127.0.0.1:${port}`;
  try {
    await Promise.race([
      eventually(
        async () => {
          const res = await fetch(`${baseUrl}/readyz`);
          if (res.status !== 200) throw new Error(`not ready: ${res.status}`);
        },
        40_000,
        100,
      ),
      exited.then(() => {
        throw new Error(`the cloud exited (${child.exitCode}) before it was ready`);
      }),
    ]);
  } catch (err) {
    await end("SIGKILL");
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    baseUrl,
    child,
    kill: () => end("SIGKILL"),
    async stop() {
      await end("SIGTERM");
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
