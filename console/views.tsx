import type { ComponentChildren } from "preact";
import type { Staff } from "./api.ts";
import { DeviceView } from "./device-view.tsx";

/** What a view is handed: the address's parameters and who is signed in (a viewer sees no action controls). */
export type ViewProps = { params: Record<string, string>; staff: Staff };

/**
 * The console's views by address (each a deep link), in the order the navigation lists those with `nav`.
 * The first one is where the console opens.
 */
export type View = {
  pattern: string;
  title: string;
  nav?: boolean;
  render: (p: ViewProps) => ComponentChildren;
};

export const VIEWS: View[] = [
  { pattern: "/console/devices/:id", title: "Device", render: (p) => <DeviceView {...p} /> },
];
