import { describe, expect, it } from "vitest";
import { CloudConfigError, loadCloudConfig } from "./config.ts";

describe("MQTT_SHARE_GROUP", () => {
  it("defaults to one group for every replica, may be emptied, and must be one topic level", () => {
    expect(loadCloudConfig({}).MQTT_SHARE_GROUP).toBe("parking-cloud");
    expect(loadCloudConfig({ MQTT_SHARE_GROUP: "" }).MQTT_SHARE_GROUP).toBe("");
    expect(loadCloudConfig({ MQTT_SHARE_GROUP: "site_2-cloud" }).MQTT_SHARE_GROUP).toBe("site_2-cloud");
    for (const bad of ["a/b", "+", "#", "group name"])
      expect(() => loadCloudConfig({ MQTT_SHARE_GROUP: bad })).toThrow(CloudConfigError);
    expect(() => loadCloudConfig({ MQTT_SHARE_GROUP: "a/b" })).toThrow(/MQTT_SHARE_GROUP=a\/b/);
  });
});

describe("CONSOLE_MAP_TILES", () => {
  it("is unset by default (no map), and takes a tile URL template with {z}, {x} and {y}", () => {
    expect(loadCloudConfig({}).CONSOLE_MAP_TILES).toBeUndefined();
    expect(loadCloudConfig({ CONSOLE_MAP_TILES: "" }).CONSOLE_MAP_TILES).toBeUndefined();
    const template = "https://tile.example/{z}/{x}/{y}.png";
    expect(loadCloudConfig({ CONSOLE_MAP_TILES: template }).CONSOLE_MAP_TILES).toBe(template);
    expect(() => loadCloudConfig({ CONSOLE_MAP_TILES: "https://tile.example/{z}/{x}.png" })).toThrow(
      /CONSOLE_MAP_TILES.*\{y\} is missing/,
    );
  });
});
