import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { currentStaff, type Staff, signOut, whenSessionEnds } from "./api.ts";
import { startLive, stopLive } from "./live.ts";
import { LiveStatusLine } from "./live-status.tsx";
import { Link, match, usePath } from "./router.tsx";
import { SignIn } from "./sign-in.tsx";
import { VIEWS } from "./views.tsx";

/**
 * The console's shell: who is signed in (or the sign-in form), then the view the address names. Every view
 * has its own address under /console/, served by the same page, so a pasted link opens it after sign-in.
 */
function Console() {
  const [staff, setStaff] = useState<Staff | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  /** Why the sign-in form shows again, when the session ended under the page. */
  const [ended, setEnded] = useState<string | null>(null);
  const path = usePath();

  useEffect(
    () =>
      whenSessionEnds(() => {
        setStaff(null);
        setEnded("Your session has ended (timed out or signed out elsewhere). Sign in again to go on.");
      }),
    [],
  );

  useEffect(() => {
    currentStaff().then(setStaff, (err: unknown) => setError(String(err)));
  }, []);

  // One live stream for the page while someone is signed in.
  useEffect(() => {
    if (staff) startLive();
    else if (staff === null) stopLive();
  }, [staff]);

  if (error)
    return (
      <p role="alert" class="error">
        The console could not reach the cloud: {error}
      </p>
    );
  if (staff === undefined) return <p aria-busy="true">Loading…</p>;
  if (staff === null)
    return (
      <SignIn
        notice={ended}
        onSignedIn={(s) => {
          setEnded(null);
          setStaff(s);
        }}
      />
    );
  return (
    <>
      <header class="bar">
        <nav aria-label="Console">
          {VIEWS.filter((v) => (typeof v.nav === "function" ? v.nav(staff) : v.nav)).map((v) => (
            <Link key={v.pattern} href={v.pattern} current={match(v.pattern, path) !== null}>
              {v.title}
            </Link>
          ))}
        </nav>
        <LiveStatusLine />
        <span>
          Signed in as <strong>{staff.email}</strong> ({staff.role})
        </span>
        <button
          type="button"
          onClick={() =>
            signOut().then(
              () => setStaff(null),
              (e: unknown) => setError(String(e)),
            )
          }
        >
          Sign out
        </button>
      </header>
      <main>
        <CurrentView path={path} staff={staff} />
      </main>
    </>
  );
}

/** The view the address names, or a page that says there is none. */
function CurrentView({ path, staff }: { path: string; staff: Staff }) {
  for (const view of VIEWS) {
    const params = match(view.pattern, path);
    if (params) {
      document.title = `${view.title} · Operator console`;
      return <>{view.render({ params, staff })}</>;
    }
  }
  const home = VIEWS[0];
  return (
    <section>
      <h1>No such page</h1>
      <p>
        Nothing of the console is at <code>{path}</code>.{" "}
        {home && <Link href={home.pattern}>Go to {home.title}</Link>}
      </p>
    </section>
  );
}

const root = document.getElementById("console");
if (root) render(<Console />, root);
