/** A whitelist page's dialogs: remove a card, add one. */
import { ActionDialog } from "./action-dialog.tsx";
import { addCard, removeCard } from "./whitelists-api.ts";

/** What the page is asking about: a card to add, or one to remove. */
export type Pending = { kind: "add" } | { kind: "remove"; card: string };

/** The dialog of the pending action: the card's fields to add, or a confirmation to remove one. */
export function CardDialog(props: {
  whitelistId: string;
  pending: Pending;
  onClose: () => void;
  onDone: () => void;
}) {
  const { whitelistId, pending, onClose, onDone } = props;
  if (pending.kind === "add")
    return <AddCardDialog act={(card) => addCard(whitelistId, card)} onClose={onClose} onDone={onDone} />;
  return (
    <ActionDialog
      title={`Remove card ${pending.card}`}
      act={() => removeCard(whitelistId, pending.card)}
      onClose={onClose}
      onDone={onDone}
    >
      <p>The gateways serving this whitelist's targets stop accepting it once they sync.</p>
    </ActionDialog>
  );
}

/** The public ADD's fields; the cloud checks them with the API's schema and its refusal shows here. */
export function AddCardDialog(props: {
  act: (card: Parameters<typeof addCard>[1]) => Promise<unknown>;
  onClose: () => void;
  onDone: () => void;
}) {
  return (
    <ActionDialog
      title="Add card"
      onClose={props.onClose}
      onDone={props.onDone}
      act={(form) => {
        const expires = String(form.get("expires_at") ?? "").trim();
        return props.act({
          id: String(form.get("id") ?? "").trim(),
          status: String(form.get("status") ?? "ACTIVE"),
          ...(expires ? { expires_at: expires } : {}),
          is_master_key: form.get("is_master_key") === "on",
          comment: String(form.get("comment") ?? ""),
        });
      }}
    >
      <label>
        Card id
        <input name="id" required autocomplete="off" placeholder="lowercase hex, e.g. 04a1b2c3d4" />
      </label>
      <label>
        Status
        <select name="status">
          <option value="ACTIVE">ACTIVE</option>
          <option value="INACTIVE">INACTIVE</option>
        </select>
      </label>
      <label>
        Expires at
        <input
          name="expires_at"
          autocomplete="off"
          placeholder="RFC 3339, e.g. 2030-01-31T23:59:00Z; empty: never"
        />
      </label>
      <label class="check">
        <input type="checkbox" name="is_master_key" /> Master key
      </label>
      <label>
        Comment
        <textarea name="comment" maxLength={1000} rows={2} />
      </label>
    </ActionDialog>
  );
}
