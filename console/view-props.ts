import type { Staff } from "./api.ts";

/** What a view is handed: the address's parameters and who is signed in (a viewer sees no action controls). */
export type ViewProps = { params: Record<string, string>; staff: Staff };
