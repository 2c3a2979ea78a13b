import { describe, expect, it } from "vitest";
import { ConfigError, parseGatewayConfig } from "./config.ts";

const base = {
  gateway_id: "gw-1",
  secret: "correct horse",
  broker: { url: "mqtt://localhost:1883" },
  state_dir: "/var/lib/parking-gateway",
};

describe("the sweeps' schedules in the gateway config", () => {
  it("default to every 15 and every 5 minutes, and take null for never", () => {
    expect(parseGatewayConfig(base)).toMatchObject({
      sensor_sweep: "*/15 * * * *",
      key_sweep: "*/5 * * * *",
    });
    expect(parseGatewayConfig({ ...base, sensor_sweep: null, key_sweep: "0 3 * * *" })).toMatchObject({
      sensor_sweep: null,
      key_sweep: "0 3 * * *",
    });
  });

  it("refuse a bad expression, naming the key and what could not be read", () => {
    const bad = () => parseGatewayConfig({ ...base, sensor_sweep: "0 22-2 * * *", key_sweep: "0 0 30 2 *" });
    expect(bad).toThrow(ConfigError);
    expect(bad).toThrow(
      "sensor_sweep: not a cron expression (0 22-2 * * *: From value is larger than to value: '22-2')",
    );
    expect(bad).toThrow("key_sweep: not a cron expression (0 0 30 2 *: matches no date)");
  });
});
