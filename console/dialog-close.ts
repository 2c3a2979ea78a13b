/**
 * A modal dialog's ways of closing, each calling `close` once the dialog is gone. Escape fires `cancel` at
 * once but `close` only a task later, by when a quick key may have opened the dialog again: acting on
 * `cancel`, and on a late `close` only while the dialog is still on the page, never shuts the new one.
 */
export function closing(close: () => void) {
  return {
    onCancel: (e: Event) => {
      // Closed here, before the view drops it, so the focus goes back to the button that opened it.
      (e.currentTarget as HTMLDialogElement).close();
      close();
    },
    onClose: (e: Event) => {
      if ((e.currentTarget as Element).isConnected) close();
    },
  };
}
