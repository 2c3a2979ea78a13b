/**
 * An instant as every view of the console shows it: UTC to the second, the same on every screen, so a time
 * pasted into a ticket means one thing; machine-readable in its datetime.
 */
export function When({ at, none = "—" }: { at: string | null | undefined; none?: string }) {
  if (!at) return <>{none}</>;
  return <time dateTime={at}>{`${at.slice(0, 19).replace("T", " ")} UTC`}</time>;
}
