package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.SnapshotInfo;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a chunk's rows into {@link ReadEvent}s, registering the chunk for acknowledgement. Public
 * only for the benchmarks module; not API.
 */
public final class ReadEvents {

  private ReadEvents() {}

  /**
   * Registers a table's reset with the tracker and returns it: a {@link TruncateEvent} of the one
   * table with a {@link SnapshotInfo}, before the table's rows read whole at {@code at}.
   *
   * @param tracker the source's snapshot acknowledgements
   * @param slot the slot, for the offset
   * @param range the table's range, read from its start
   * @param at the position the table is read at (a temporary slot's consistent point)
   * @param readAt when the read began
   * @param emptyTable true if the table has no row: the reset is then the last event of the table
   * @return the reset
   */
  public static TruncateEvent reset(
      SnapshotAcknowledgements tracker,
      String slot,
      SnapshotAcknowledgements.Range range,
      PgLsn at,
      Instant readAt,
      boolean emptyTable) {
    long chunk = tracker.deliverReset(range, at);
    TransactionInfo info = new TransactionInfo(0, at, at, readAt, null, 1);
    CdcOffset offset = new CdcOffset(slot, at, at, 0, 0, 1, chunk);
    return new TruncateEvent(
        offset,
        info,
        at,
        List.of(range.table()),
        false,
        false,
        new SnapshotInfo(range.snapshotId(), chunk, at, emptyTable));
  }

  /**
   * Registers the chunk with the tracker (moving its range's read cursor) and returns its events.
   *
   * @param tracker the source's snapshot acknowledgements
   * @param slot the slot, for offsets
   * @param range the range the chunk was read from
   * @param rows the rows to deliver, their keys, what was skipped, how far the read got
   * @param consistentWith the position the rows are consistent with
   * @param readAt when the chunk was read
   * @return the events, in key order; empty if no row is to be delivered
   */
  @SuppressWarnings("unchecked")
  public static List<ReadEvent> register(
      SnapshotAcknowledgements tracker,
      String slot,
      SnapshotAcknowledgements.Range range,
      ChunkRows rows,
      PgLsn consistentWith,
      Instant readAt) {
    int n = rows.rows().size();
    List<String>[] keys = rows.keys().toArray(new List[0]);
    long chunk = tracker.deliver(range, keys, rows.readThrough(), rows.endsRange(), rows.skipped());
    if (n == 0) {
      return List.of();
    }
    boolean lastOfTable = rows.endsRange() && tracker.fullyRead(range);
    TransactionInfo info = new TransactionInfo(0, consistentWith, consistentWith, readAt, null, n);
    List<ReadEvent> events = new ArrayList<>(n);
    String id = range.snapshotId();
    SnapshotInfo snapshot = new SnapshotInfo(id, chunk, consistentWith, false);
    SnapshotInfo last = lastOfTable ? new SnapshotInfo(id, chunk, consistentWith, true) : snapshot;
    for (int i = 0; i < n; i++) {
      Row row = rows.rows().get(i);
      CdcOffset offset = new CdcOffset(slot, consistentWith, consistentWith, 0, i, n, chunk);
      events.add(
          new ReadEvent(
              offset, info, consistentWith, range.table(), row, i == n - 1 ? last : snapshot));
    }
    return events;
  }
}
