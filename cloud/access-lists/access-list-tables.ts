/** Store tables of access lists and their members (see cloud/store/schema.ts for the conventions). */
// biome-ignore lint/suspicious/noEmptyInterface: filled in as the access-list store takes shape
export interface AccessListTables {}
