/** What a failure says, in the words of the error that carried it (the cloud's, for an ApiError). */
export const messageOf = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The cloud's refusal (or any failure), said at once to a screen reader; nothing while there is none. */
export function Alert({ error }: { error: string | null | false | undefined }) {
  if (!error) return null;
  return (
    <p role="alert" class="error">
      {error}
    </p>
  );
}

/** A page whose data has not come yet: its title, then the failure or "Loading…". */
export function Awaiting({ title, error }: { title: string; error: string | null }) {
  return (
    <section>
      <h1>{title}</h1>
      <Alert error={error} />
      {!error && <p aria-busy="true">Loading…</p>}
    </section>
  );
}
