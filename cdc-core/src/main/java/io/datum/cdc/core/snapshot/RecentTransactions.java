package io.datum.cdc.core.snapshot;

/**
 * The xids of the last {@value #SIZE} transactions the stream delivered with row changes, for the
 * online snapshot's visibility hazard check: a transaction whose commit record precedes a chunk's
 * low watermark may not yet be visible to the chunk's snapshot (synchronous replication waits after
 * writing the commit record and before the transaction becomes visible: xact.c, {@code
 * RecordTransactionCommit}). Replication thread only.
 */
final class RecentTransactions {

  /** How many transactions are remembered; a power of two. */
  static final int SIZE = 1 << 17;

  private final int[] xids = new int[SIZE];
  private int next;
  private long last = -1;

  /** Remembers a transaction that delivered a row change (once per run of its changes). */
  void remember(long xid) {
    if (xid == last) {
      return;
    }
    last = xid;
    xids[next] = (int) xid;
    next = (next + 1) & (SIZE - 1);
  }

  /**
   * Returns a remembered transaction delivered before the window (not seen in it) that the snapshot
   * does not see, or 0 if there is none.
   *
   * @param window the chunk's window
   * @param s the chunk's snapshot
   */
  long firstNotVisible(ChunkWindow window, Visibility s) {
    for (int v : xids) {
      long x = v & 0xFFFF_FFFFL;
      if (x != 0 && !window.hasSeen(x) && !s.sees(x)) {
        return x;
      }
    }
    return 0;
  }
}
