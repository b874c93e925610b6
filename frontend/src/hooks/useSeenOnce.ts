import { useEffect, useState } from "react";

/** True once the element has come near the viewport (and stays true): panels below the fold
 * neither fetch nor draw until someone scrolls towards them. Returns a callback ref, so an
 * element that mounts later (after a loading state) is observed too. */
export function useSeenOnce<T extends Element>(margin = "300px") {
  const [element, setElement] = useState<T | null>(null);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    if (seen || !element) return;
    const observer = new IntersectionObserver(
      (entries) => {
        if (entries.some((e) => e.isIntersecting)) setSeen(true);
      },
      { rootMargin: margin },
    );
    observer.observe(element);
    return () => observer.disconnect();
  }, [element, seen, margin]);
  return [setElement, seen] as const;
}
