import { useState } from "preact/hooks";
import { Alert } from "./alert.tsx";
import { type Staff, signIn } from "./api.ts";

/**
 * The sign-in form: email and password, and what the cloud said when it refused; `notice` says why it
 * shows again (the session ended under an open page).
 */
export function SignIn({
  onSignedIn,
  notice,
}: {
  onSignedIn: (staff: Staff) => void;
  notice?: string | null;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    const form = new FormData(event.currentTarget as HTMLFormElement);
    setBusy(true);
    setError(null);
    try {
      onSignedIn(await signIn(String(form.get("email")), String(form.get("password"))));
    } catch (err) {
      setError(err instanceof Error ? err.message : String(err));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="sign-in">
      <h1>Operator console</h1>
      {notice && (
        <p role="status" class="notice">
          {notice}
        </p>
      )}
      <form onSubmit={(e) => void submit(e)}>
        <label>
          Email
          <input name="email" type="email" autocomplete="username" required />
        </label>
        <label>
          Password
          <input name="password" type="password" autocomplete="current-password" required />
        </label>
        <Alert error={error} />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
