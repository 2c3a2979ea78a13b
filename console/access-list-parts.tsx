/** An access list page's parts: its members and its invites. */
import type { ConsoleAccessList } from "../shared/api/console-access-lists.ts";
import { Link } from "./router.tsx";
import { When } from "./when.tsx";

export function Members(props: {
  list: ConsoleAccessList;
  mayAct: boolean;
  onRemove: (userId: string) => void;
}) {
  const paid = props.list.kind === "paid";
  return (
    <>
      <h2>Members</h2>
      {props.list.members.length === 0 ? (
        <p>No members.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Members">
            <thead>
              <tr>
                <th>Rider</th>
                <th>Status</th>
                <th>Joined</th>
                <th>Ends</th>
                {paid && <th>Next payment</th>}
                <th>Comment</th>
                <th>External id</th>
                {props.mayAct && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {props.list.members.map((m) => (
                <tr key={m.user_id}>
                  <td>
                    <Link href={`/console/riders/${m.user_id}`}>{m.user_id}</Link>
                  </td>
                  <td>{m.status}</td>
                  <td>
                    <When at={m.joined_at} />
                  </td>
                  <td>
                    <When at={m.expires_at} />
                  </td>
                  {paid && (
                    <td>
                      <When at={m.next_payment_at} />
                    </td>
                  )}
                  <td>{m.comment}</td>
                  <td>{m.external_id}</td>
                  {props.mayAct && (
                    <td class="actions">
                      {m.status.startsWith("included:") && (
                        <button
                          type="button"
                          aria-label={`Remove member ${m.user_id}`}
                          onClick={() => props.onRemove(m.user_id)}
                        >
                          Remove member
                        </button>
                      )}
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}

export function Invites(props: {
  list: ConsoleAccessList;
  mayAct: boolean;
  onRevoke: (phone: string) => void;
}) {
  return (
    <>
      <h2>Invites</h2>
      {props.list.invites.length === 0 ? (
        <p>No invites.</p>
      ) : (
        <div class="scroll">
          <table aria-label="Invites">
            <thead>
              <tr>
                <th>Phone number</th>
                <th>Status</th>
                <th>Created</th>
                <th>Expires</th>
                <th>Comment</th>
                {props.mayAct && <th>Actions</th>}
              </tr>
            </thead>
            <tbody>
              {props.list.invites.map((i) => (
                <tr key={i.phone_number}>
                  <td>{i.phone_number}</td>
                  <td>{i.status}</td>
                  <td>
                    <When at={i.created_at} />
                  </td>
                  <td>
                    <When at={i.expires_at} />
                  </td>
                  <td>{i.comment}</td>
                  {props.mayAct && (
                    <td class="actions">
                      <button
                        type="button"
                        aria-label={`Revoke invite ${i.phone_number}`}
                        onClick={() => props.onRevoke(i.phone_number)}
                      >
                        Revoke invite
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </>
  );
}
