import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { Alert, messageOf } from "./alert.tsx";
import { closing } from "./dialog-close.ts";

/**
 * A modal dialog that asks before acting: its fields (a Reason, say) are the children, `act` gets them as
 * submitted, then **Confirm**. What the cloud refused stays in the dialog, in the cloud's words, so the
 * operator can correct it and confirm again.
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
    const element = event.currentTarget as HTMLFormElement;
    setBusy(true);
    try {
      await props.act(new FormData(element));
      // Closed before it goes, so the browser gives the focus back to the button that opened it.
      element.closest("dialog")?.close();
      props.onDone();
    } catch (err) {
      setError(messageOf(err));
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
        <Alert error={error} />
        <div class="actions">
          <button type="submit" disabled={busy}>
            Confirm
          </button>
          {/* Closed through the dialog, so the focus goes back as well (the `close` event ends it). */}
          <button type="button" onClick={(e) => e.currentTarget.closest("dialog")?.close()}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
