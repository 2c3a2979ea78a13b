import type { ComponentChildren } from "preact";
import { useEffect, useState } from "preact/hooks";

/** The address the console shows, following the back and forward buttons and the console's own links. */
export function usePath(): string {
  const [path, setPath] = useState(location.pathname);
  useEffect(() => {
    const follow = () => setPath(location.pathname);
    addEventListener("popstate", follow);
    return () => removeEventListener("popstate", follow);
  }, []);
  return path;
}

/** Goes to another view without reloading the page (its address stays a deep link). */
export function navigate(to: string): void {
  history.pushState(null, "", to);
  dispatchEvent(new PopStateEvent("popstate"));
}

/** A link to a console view: a plain link (new tab, copy address) that a plain click follows in place. */
export function Link({
  href,
  children,
  current,
  label,
}: {
  href: string;
  children: ComponentChildren;
  current?: boolean;
  /** A name for screen readers where the visible text is shorter (a map marker's code). */
  label?: string;
}) {
  return (
    <a
      href={href}
      aria-current={current ? "page" : undefined}
      aria-label={label}
      onClick={(e) => {
        if (e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}

/** The parameters of `pattern` (`/console/devices/:id`) in `path`, or null when it does not match. */
export function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.replace(/\/+$/, "").split("/");
  const got = path.replace(/\/+$/, "").split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const value = got[i] as string;
    if (part.startsWith(":")) params[part.slice(1)] = decodeURIComponent(value);
    else if (part !== value) return null;
  }
  return params;
}
