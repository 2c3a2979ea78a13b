/**
 * Why a file could not be read, in words for whoever has to fix it. `denied` says more than "permission
 * denied" where the reader can tell whose permission is missing.
 */
export function whyUnreadable(err: unknown, denied = "permission denied"): string {
  switch ((err as NodeJS.ErrnoException).code) {
    case "ENOENT":
      return "no such file";
    case "EISDIR":
      return "it is a directory";
    case "EACCES":
      return denied;
    default:
      return err instanceof Error ? err.message : String(err);
  }
}
