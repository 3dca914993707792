package io.datum.cdc.core.snapshot;

import java.util.Arrays;

/**
 * A transaction snapshot as {@code pg_current_snapshot()} prints it, {@code xmin:xmax:xip,...}
 * (PostgreSQL docs, 9.28.1 Transaction ID and Snapshot Information Functions; xid8 values, 64-bit
 * with the epoch), and which transactions it sees: a transaction is visible to it if it committed
 * before the snapshot was taken, that is its xid is below {@code xmin}, or below {@code xmax} and
 * not in {@code xip} (procarray.c, {@code XidInMVCCSnapshot}). Visibility in PostgreSQL is decided
 * by the top-level transaction; pgoutput names the top-level xid in Begin, Stream Start and the
 * commit messages, which are the xids compared here.
 *
 * @param xmin the earliest transaction still active at the snapshot
 * @param xmax one past the latest completed transaction
 * @param xip the transactions active at the snapshot, ascending
 */
record PgSnapshot(long xmin, long xmax, long[] xip) implements Visibility {

  /**
   * Parses {@code pg_current_snapshot()::text}.
   *
   * @param text such as {@code 795:799:795,797} or {@code 800:800:}
   * @return the snapshot
   * @throws IllegalArgumentException if the text is not of that form
   */
  static PgSnapshot parse(String text) {
    String[] parts = text.split(":", -1);
    if (parts.length != 3) {
      throw new IllegalArgumentException("not a pg_snapshot: \"" + text + '"');
    }
    try {
      long xmin = Long.parseUnsignedLong(parts[0]);
      long xmax = Long.parseUnsignedLong(parts[1]);
      long[] xip =
          parts[2].isEmpty()
              ? new long[0]
              : Arrays.stream(parts[2].split(",")).mapToLong(Long::parseUnsignedLong).toArray();
      Arrays.sort(xip);
      return new PgSnapshot(xmin, xmax, xip);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("not a pg_snapshot: \"" + text + '"', e);
    }
  }

  /**
   * Widens a 32-bit xid from the stream to the xid8 nearest this snapshot's {@code xmax} (the
   * transactions compared are recent: within 2^31 of it).
   *
   * @param xid an unsigned 32-bit transaction id
   * @return the full transaction id
   */
  long widen(long xid) {
    long candidate = (xmax & ~0xFFFF_FFFFL) | (xid & 0xFFFF_FFFFL);
    long diff = candidate - xmax;
    if (diff > 0x7FFF_FFFFL) {
      candidate -= 1L << 32;
    } else if (diff < -0x8000_0000L) {
      candidate += 1L << 32;
    }
    return candidate;
  }

  /**
   * Returns whether the snapshot sees the effects of the transaction (if it committed).
   *
   * @param xid a 32-bit xid from the stream
   * @return true if it had completed when the snapshot was taken
   */
  @Override
  public boolean sees(long xid) {
    long x = widen(xid);
    if (x < xmin) {
      return true;
    }
    if (x >= xmax) {
      return false;
    }
    return Arrays.binarySearch(xip, x) < 0;
  }

  @Override
  public String toString() {
    StringBuilder b = new StringBuilder().append(xmin).append(':').append(xmax).append(':');
    for (int i = 0; i < xip.length; i++) {
      b.append(i == 0 ? "" : ",").append(xip[i]);
    }
    return b.toString();
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof PgSnapshot p
        && p.xmin == xmin
        && p.xmax == xmax
        && Arrays.equals(p.xip, xip);
  }

  @Override
  public int hashCode() {
    return Long.hashCode(xmin) * 31 + Long.hashCode(xmax);
  }
}
