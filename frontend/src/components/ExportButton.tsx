// A button that makes a file and offers it (a picture, a report): it says it is working while it
// does (a picture of a long page takes a moment), and says why when it could not.
import { useState } from "react";

export function ExportButton({ label, make, testId }: { label: string; make: () => Promise<void> | void; testId?: string }) {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);

  async function run() {
    setBusy(true);
    setProblem(null);
    try {
      await make();
    } catch (error) {
      setProblem(error instanceof Error ? error.message : String(error));
    } finally {
      setBusy(false);
    }
  }

  return (
    <span className="export-button">
      <button type="button" onClick={() => void run()} disabled={busy} aria-busy={busy} data-testid={testId}>
        {busy ? `${label}…` : label}
      </button>
      {problem ? (
        <span className="tone-bad small" role="alert">
          could not export: {problem}
        </span>
      ) : null}
    </span>
  );
}
