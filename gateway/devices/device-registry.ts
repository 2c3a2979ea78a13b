import type { DeviceMap } from "../../shared/wire/messages.ts";
import type { DeviceDirectory, MappedDevice } from "../ports.ts";

/**
 * The devices this gateway drives, by id and by alias, from the cloud's latest device map (the
 * DeviceDirectory port, plus `replace` for the composition root when a new map arrives).
 */
export class DeviceRegistry implements DeviceDirectory {
  private map: DeviceMap | null = null;
  private byId = new Map<string, MappedDevice>();
  private byAlias = new Map<string, MappedDevice>();

  get version(): string | null {
    return this.map?.version ?? null;
  }

  get location(): NonNullable<DeviceMap["location"]> | null {
    return this.map?.location ?? null;
  }

  replace(map: DeviceMap): void {
    this.map = map;
    this.byId = new Map(map.devices.map((device) => [device.device_id, device]));
    this.byAlias = new Map(map.devices.map((device) => [device.alias, device]));
  }

  get(id: string): MappedDevice | undefined {
    return this.byId.get(id);
  }

  byAliasName(alias: string): MappedDevice | undefined {
    return this.byAlias.get(alias);
  }

  all(): MappedDevice[] {
    return [...this.byId.values()];
  }

  /** The device wired to one channel of a board, if any. */
  onChannel(board: number, channel: number): MappedDevice | undefined {
    return this.all().find((device) => device.bus?.board === board && device.bus.channel === channel);
  }

  /** Devices behind one board (a board that stops answering takes all of them down). */
  onBoard(board: number): MappedDevice[] {
    return this.all().filter((device) => device.bus?.board === board);
  }
}
