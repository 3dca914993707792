package io.datum.cdc.core.snapshot;

/**
 * Which transactions a chunk's snapshot sees: on a primary its {@link PgSnapshot} decides by xid;
 * on a hot standby, where {@code pg_current_snapshot()} lists no running xid (a snapshot taken
 * during recovery keeps them all in its subxip array, which the function does not print:
 * procarray.c {@code GetSnapshotData}, xid8funcs.c {@code pg_current_snapshot}), the replay
 * position decides: a standby makes a transaction visible when it replays its commit record, in WAL
 * order ({@link #ofReplay}).
 */
interface Visibility {

  /**
   * Returns whether the snapshot sees the effects of the transaction (if it committed).
   *
   * @param xid a 32-bit xid from the stream
   * @return true if it had completed when the snapshot was taken
   */
  boolean sees(long xid);

  /**
   * The visibility of a snapshot taken on a hot standby while its replay position was between
   * {@code before} and {@code after}, for the transactions a window saw: one whose commit record
   * ended at or before {@code before} is seen, one that ended after {@code after} is not, and one
   * in between cannot be told (null: the chunk is read again). Every transaction the stream
   * delivered before the window ended before {@code before} (the chunk is read once the standby
   * replayed past its low watermark), so it is seen.
   *
   * @param window what the stream delivered between the chunk's watermarks
   * @param before the replay position read before the snapshot was taken
   * @param after the replay position read after
   * @return the visibility, or null if a transaction that changed the chunk's table ended between
   *     the two positions
   */
  static Visibility ofReplay(ChunkWindow window, long before, long after) {
    java.util.Set<Long> unseen = new java.util.HashSet<>();
    for (long xid : window.changedBy()) {
      long end = window.txEnd(xid);
      if (end > after) {
        unseen.add(xid);
      } else if (end > before) {
        return null;
      }
    }
    return xid -> !unseen.contains(xid);
  }
}
