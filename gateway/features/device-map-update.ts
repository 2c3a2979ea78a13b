import type { Logger } from "pino";
import type { DeviceMap, SensorCause } from "../../shared/wire/messages.ts";
import type { DeviceMapStore, MappedDevice, SensorReadings, SleepStates } from "../ports.ts";

/**
 * Takes a device map the cloud sends (retained, so again on every connect): a version already held changes
 * nothing. A new one is kept, replaces the registry and the GPIO doors tracked; devices this gateway drives
 * for the first time (or wired differently) are forgotten and read at once, and the heartbeat reports the
 * new map's devices without waiting an interval.
 */
export function createDeviceMapUpdate(deps: {
  maps: Pick<DeviceMapStore, "save">;
  registry: {
    readonly version: string | null;
    all(): MappedDevice[];
    get(deviceId: string): MappedDevice | undefined;
    replace(map: DeviceMap): void;
  };
  doors: { track(devices: MappedDevice[]): void };
  sensors: Pick<SensorReadings, "forget">;
  sleep: Pick<SleepStates, "forget">;
  readAll(devices: MappedDevice[], cause: SensorCause): Promise<void>;
  beat(): void;
  log: Logger;
}) {
  const { registry, sensors } = deps;
  return (map: DeviceMap): void => {
    if (map.version === registry.version) return;
    const before = new Map(registry.all().map((device) => [device.device_id, JSON.stringify(device)]));
    deps.maps.save(map);
    registry.replace(map);
    deps.doors.track(map.devices);
    deps.log.info({ version: map.version, devices: map.devices.length }, "device map updated");
    const fresh = map.devices.filter((device) => before.get(device.device_id) !== JSON.stringify(device));
    for (const deviceId of before.keys()) if (!registry.get(deviceId)) sensors.forget(deviceId);
    for (const device of fresh) sensors.forget(device.device_id);
    for (const device of fresh) deps.sleep.forget(device.device_id);
    void deps.readAll(fresh, "device_map");
    deps.beat();
  };
}
