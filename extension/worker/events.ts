/** A minimal typed event emitter: `on` returns an unsubscribe function. */
export class TypedEmitter<Events extends { [K in keyof Events]: unknown }> {
  private readonly listeners = new Map<keyof Events, Set<(e: never) => void>>();

  on<K extends keyof Events>(name: K, listener: (event: Events[K]) => void): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(listener);
    return () => set.delete(listener);
  }

  protected emit<K extends keyof Events>(name: K, event: Events[K]): void {
    for (const listener of this.listeners.get(name) ?? []) {
      try {
        (listener as (e: Events[K]) => void)(event);
      } catch {
        // A listener's bug must not break the engine.
      }
    }
  }
}
