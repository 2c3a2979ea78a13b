/** Store tables of the site-event watchers (see cloud/store/schema.ts for the conventions). */

/** Whether each device was last seen online, as the connection watcher last notified it. */
export interface DeviceConnectionsTable {
  device_id: string;
  /** 0/1 */
  online: number;
  changed_at: string;
}

/** A location outage of 2 hours or more, confirmed once (spec: connection_confirmed). */
export interface LocationOutagesTable {
  location_id: string;
  offline_since: string;
  confirmed_at: string;
}

export interface SiteEventTables {
  device_connections: DeviceConnectionsTable;
  location_outages: LocationOutagesTable;
}
