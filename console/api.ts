/**
 * The console's calls to the cloud: same origin, the session cookie sent by the browser, and on every
 * state-changing request the session's CSRF token in a header (the cookie alone never authorises a change).
 */

/** Who is signed in, as GET /console/api/session answers. */
export type Staff = {
  email: string;
  role: "viewer" | "operator" | "admin";
  operator_id: string | null;
  csrf_token: string;
  /** Whether the cloud serves the demo hardware panel (the demo only). */
  demo_panel: boolean;
  /** The overview map's tile URL template, or null: no map (the list alone). */
  map_tiles: string | null;
};

/** An answer that is not 2xx, with the spec's error body when there is one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

let csrf: string | null = null;
let sessionEnded: (() => void) | null = null;

/**
 * Calls `fn` when the cloud answers 401 to a signed-in page (the session timed out or was signed out
 * elsewhere): the page then goes back to the sign-in form instead of failing call after call.
 */
export function whenSessionEnds(fn: () => void): () => void {
  sessionEnded = fn;
  return () => {
    if (sessionEnded === fn) sessionEnded = null;
  };
}

/** A request to the console's API: JSON in and out, the CSRF token on every change. */
export async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  extra: Record<string, string> = {},
): Promise<T> {
  const headers: Record<string, string> = { ...extra };
  if (body !== undefined) headers["content-type"] = "application/json";
  if (method !== "GET" && csrf) headers["x-csrf-token"] = csrf;
  const res = await fetch(path, {
    method,
    headers,
    credentials: "same-origin",
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (res.status === 401 && csrf !== null) {
    csrf = null;
    sessionEnded?.();
  }
  if (res.status === 204) return undefined as T;
  const data: unknown = await res.json().catch(() => null);
  if (!res.ok) {
    const message =
      data && typeof data === "object" && "error_message" in data && typeof data.error_message === "string"
        ? data.error_message
        : `${res.status} ${res.statusText}`;
    throw new ApiError(res.status, message);
  }
  return data as T;
}

/** Asks the cloud whether the session still holds; a 401 ends it on the page (whenSessionEnds). */
export function checkSession(): void {
  currentStaff().catch(() => {
    // Unreachable or refused for another reason: the stream's retries go on.
  });
}

/** The signed-in staff member, or null when nobody is (401). */
export async function currentStaff(): Promise<Staff | null> {
  try {
    const staff = await call<Staff>("GET", "/console/api/session");
    csrf = staff.csrf_token;
    return staff;
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) return null;
    throw err;
  }
}

export async function signIn(email: string, password: string): Promise<Staff> {
  await call("POST", "/console/api/session", { email, password });
  const staff = await currentStaff();
  if (!staff) throw new ApiError(401, "signed in, but the session was not kept: are cookies allowed?");
  return staff;
}

/** Ends the session; one already ended (401) is as good. */
export async function signOut(): Promise<void> {
  try {
    await call("DELETE", "/console/api/session");
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 401)) throw err;
  }
  csrf = null;
}
