import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { closing } from "./dialog-close.ts";

const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * A modal dialog that asks before acting: its fields (a Reason, say) are the children, `act` gets them as
 * submitted, and a refusal from the cloud is said in the dialog, which stays open.
 */
export function ConfirmDialog(props: {
  title: string;
  children?: ComponentChildren;
  act: (form: FormData) => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}) {
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function confirm(event: Event) {
    event.preventDefault();
    setBusy(true);
    try {
      await props.act(new FormData(event.currentTarget as HTMLFormElement));
      props.onDone();
    } catch (err) {
      setError(message(err));
      setBusy(false);
    }
  }

  return (
    <dialog
      ref={(d) => {
        if (d && !d.open) d.showModal();
      }}
      aria-labelledby="confirm-title"
      {...closing(props.onClose)}
    >
      <form onSubmit={(e) => void confirm(e)}>
        <h2 id="confirm-title">{props.title}</h2>
        {props.children}
        {error && (
          <p role="alert" class="error">
            {error}
          </p>
        )}
        <div class="actions">
          <button type="submit" disabled={busy}>
            Confirm
          </button>
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
