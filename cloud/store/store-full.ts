/** The codes a store gives when its disk is full: SQLite's, and PostgreSQL's SQLSTATE disk_full. */
const STORE_FULL = new Set(["SQLITE_FULL", "53100"]);

/** Whether a store refused a write for a full disk (rolled back; it passes once there is room). */
export const isStoreFull = (err: unknown): boolean =>
  STORE_FULL.has(String((err as { code?: unknown } | null)?.code));
