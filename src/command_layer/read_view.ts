// The view of the store a command reads through other than the latest state (a snapshot read's,
// a transaction's), ambient while the command runs, like its deadline. A cursor the command leaves
// open reads its later batches through the same view (cursor_manager.ts): `adopt` hands the view's
// lifetime to the cursor, which lets it go when it closes.
export interface ReadView {
  run<T>(fn: () => T): T;
  // The cursor's release, or a no-op when someone else owns the view (a transaction).
  adopt(): () => void;
}

let active: ReadView | undefined;

export function withReadView<T>(view: ReadView | undefined, fn: () => T): T {
  const previous = active;
  active = view;
  try {
    return view === undefined ? fn() : view.run(fn);
  } finally {
    active = previous;
  }
}

export function currentReadView(): ReadView | undefined {
  return active;
}
