import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { closing } from "./dialog-close.ts";

export const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * A modal dialog that asks before acting: its fields (if any), then **Confirm**. What the cloud refused
 * stays in the dialog, in the cloud's words, so the operator can correct it and confirm again.
 */
export function ActionDialog(props: {
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
      aria-labelledby="action-title"
      {...closing(props.onClose)}
    >
      <form onSubmit={(e) => void confirm(e)}>
        <h2 id="action-title">{props.title}</h2>
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
