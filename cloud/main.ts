import { loadCloudConfig } from "./config.ts";
import { startCloud } from "./server.ts";

/** Process entry of the cloud API: config → start → wait for SIGTERM/SIGINT → graceful stop. */
async function main() {
  const cfg = loadCloudConfig();
  const cloud = await startCloud(cfg);
  cloud.app.log.info({ base_url: cloud.baseUrl, mqtt: cloud.mqttUrl }, "cloud ready");
  const stop = async (signal: string) => {
    cloud.app.log.info({ signal }, "stopping");
    await cloud.stop();
    process.exit(0);
  };
  process.once("SIGTERM", () => void stop("SIGTERM"));
  process.once("SIGINT", () => void stop("SIGINT"));
}

main().catch((err: unknown) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
