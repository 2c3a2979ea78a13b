import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { currentStaff, type Staff, signOut } from "./api.ts";
import { SignIn } from "./sign-in.tsx";

/**
 * The console's shell: who is signed in (or the sign-in form), then the view the address names. Every view
 * has its own address under /console/, served by the same page, so a pasted link opens it after sign-in.
 */
function Console() {
  const [staff, setStaff] = useState<Staff | null | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    currentStaff().then(setStaff, (err: unknown) => setError(String(err)));
  }, []);

  if (error)
    return (
      <p role="alert" class="error">
        The console could not reach the cloud: {error}
      </p>
    );
  if (staff === undefined) return <p aria-busy="true">Loading…</p>;
  if (staff === null) return <SignIn onSignedIn={setStaff} />;
  return (
    <header class="bar">
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
  );
}

const root = document.getElementById("console");
if (root) render(<Console />, root);
