/**
 * A job's documents that never change once written (its metadata, a beta job's query and plan),
 * read from the store once per worker process instead of once per chunk: a bucket round trip
 * each, which a job of many chunks otherwise repeats for every one of them. A failed read is
 * not kept, so a document written later (a plan, once planning ends) is read when it exists.
 */
export class JobDocuments {
  private readonly entries = new Map<string, Promise<unknown>>();

  constructor(private readonly limit = 64) {}

  get<T>(key: string, read: () => Promise<T>): Promise<T> {
    let entry = this.entries.get(key) as Promise<T> | undefined;
    if (!entry) {
      entry = read();
      this.entries.set(key, entry);
      entry.catch(() => this.entries.delete(key));
      // Oldest first out: a worker serves a few jobs at a time.
      if (this.entries.size > this.limit) this.entries.delete(this.entries.keys().next().value!);
    }
    return entry;
  }
}
