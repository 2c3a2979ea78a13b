/** Store tables of sessions, payments and price lists (see cloud/store/schema.ts for the conventions). */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the session store takes shape
export interface SessionTables {}
