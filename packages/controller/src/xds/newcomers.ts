// New streams wait their turn: one is taken up per event-loop turn, so a burst of them (a churning
// client still within its rate, a fleet reconnecting at once) is read and answered between the
// I/O of the streams already up — their ACKs and pushes — instead of ahead of it. A stream whose
// client reset it while it waited is dropped without a response ever being made for it.

export class Newcomers<T> {
  private queue: T[] = [];
  private head = 0;
  private scheduled: NodeJS.Immediate | undefined;

  constructor(
    private readonly take: (item: T) => void,
    /** Whether the client has reset it meanwhile. */
    private readonly gone: (item: T) => boolean,
    private readonly dropped: () => void,
  ) {}

  add(item: T): void {
    this.queue.push(item);
    // The first is taken up on the next turn, after that turn's I/O (a reset that came with it);
    // an immediate queued from an immediate runs on the turn after.
    this.scheduled ??= setImmediate(() => {
      this.scheduled = setImmediate(() => this.turn());
    });
  }

  /** Empties the queue; returns what waited (the server is stopping). */
  clear(): T[] {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = undefined;
    const waiting = this.queue.slice(this.head);
    this.queue = [];
    this.head = 0;
    return waiting;
  }

  private turn(): void {
    this.scheduled = undefined;
    while (this.head < this.queue.length) {
      const item = this.queue[this.head++] as T;
      if (this.gone(item)) {
        this.dropped();
        continue;
      }
      this.take(item);
      break;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else this.scheduled = setImmediate(() => this.turn());
  }
}
