// The console sends each panel as a server-sent event of its own, and only when it changed: the
// page keeps the last of each. (pure)

// The panels of `next` whose JSON differs from what `sent` holds, as event data; `sent` is
// updated to them.
export function changedPanels(sent: Map<string, string>, next: Readonly<Record<string, unknown>>): Array<{ panel: string; json: string }> {
  const out: Array<{ panel: string; json: string }> = [];
  for (const [panel, value] of Object.entries(next)) {
    const json = JSON.stringify(value);
    if (sent.get(panel) === json) continue;
    sent.set(panel, json);
    out.push({ panel, json });
  }
  return out;
}

// One server-sent event: its name, then its data on one line (JSON has no raw newline).
export function sseEvent(panel: string, json: string): string {
  return `event: ${panel}\ndata: ${json}\n\n`;
}
