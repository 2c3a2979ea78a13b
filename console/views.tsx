import type { ComponentChildren } from "preact";
import { AccessListsView, AccessListView } from "./access-lists.tsx";
import { AlarmsView } from "./alarms.tsx";
import type { Staff } from "./api.ts";
import { AuditView } from "./audit.tsx";
import { DemoView } from "./demo-view.tsx";
import { DeviceView } from "./device-view.tsx";
import { LocationView } from "./location-view.tsx";
import { LocationsView } from "./locations-view.tsx";
import { RidersView, RiderView } from "./riders.tsx";
import { SessionsView, SessionView } from "./sessions.tsx";
import type { ViewProps } from "./view-props.ts";
import { WebhooksView, WebhookView } from "./webhooks.tsx";
import { WhitelistsView, WhitelistView } from "./whitelists.tsx";

/**
 * The console's views by address (each a deep link), in the order the navigation lists those with `nav`.
 * The first one is where the console opens.
 */
export type View = {
  pattern: string;
  title: string;
  /** Listed in the navigation: always, or when the signed-in session says so. */
  nav?: boolean | ((staff: Staff) => boolean);
  render: (p: ViewProps) => ComponentChildren;
};

export const VIEWS: View[] = [
  { pattern: "/console/", title: "Locations", nav: true, render: (p) => <LocationsView {...p} /> },
  { pattern: "/console/locations/:id", title: "Location", render: (p) => <LocationView {...p} /> },
  { pattern: "/console/devices/:id", title: "Device", render: (p) => <DeviceView {...p} /> },
  {
    pattern: "/console/alarms",
    title: "Alarms",
    nav: true,
    render: ({ staff }) => <AlarmsView staff={staff} />,
  },
  { pattern: "/console/sessions", title: "Sessions", nav: true, render: (p) => <SessionsView {...p} /> },
  { pattern: "/console/sessions/:id", title: "Session", render: (p) => <SessionView {...p} /> },
  { pattern: "/console/riders", title: "Riders", nav: true, render: (p) => <RidersView {...p} /> },
  { pattern: "/console/riders/:id", title: "Rider", render: (p) => <RiderView {...p} /> },
  {
    pattern: "/console/whitelists",
    title: "Whitelists",
    nav: true,
    render: (p) => <WhitelistsView {...p} />,
  },
  { pattern: "/console/whitelists/:id", title: "Whitelist", render: (p) => <WhitelistView {...p} /> },
  {
    pattern: "/console/access-lists",
    title: "Access lists",
    nav: true,
    render: (p) => <AccessListsView {...p} />,
  },
  { pattern: "/console/access-lists/:id", title: "Access list", render: (p) => <AccessListView {...p} /> },
  { pattern: "/console/webhooks", title: "Webhooks", nav: true, render: (p) => <WebhooksView {...p} /> },
  { pattern: "/console/webhooks/:id", title: "Webhook endpoint", render: (p) => <WebhookView {...p} /> },
  { pattern: "/console/audit", title: "Audit", nav: true, render: (p) => <AuditView {...p} /> },
  {
    pattern: "/console/demo",
    title: "Demo hardware",
    nav: (staff) => staff.demo_panel,
    render: (p) => <DemoView {...p} />,
  },
];
