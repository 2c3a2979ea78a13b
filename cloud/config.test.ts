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
