package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.util.Objects;

/**
 * A row that already existed, read by a snapshot rather than decoded from the replication stream.
 * Its values map exactly as those of an {@link InsertEvent} of the same row do, in text and binary
 * mode alike.
 *
 * <p>Acknowledge it like any other event, with {@link
 * io.datum.cdc.CdcCheckpointHandle#acknowledge(io.datum.cdc.CdcOffset)} of {@link #offset()}
 * ({@link CdcOffset#isSnapshotRead()} is true). With per-event durability an acknowledged read row
 * is never delivered again after a crash; an unacknowledged one is read again, unless a change of
 * its key was delivered meanwhile (that change carries the newer value).
 *
 * <p>Its {@link #transaction()} describes the chunk, not a database transaction: xid 0, both LSNs
 * the snapshot's {@link SnapshotInfo#consistentWith()}, the time the chunk was read, the chunk's
 * row count as {@code eventCount}.
 *
 * @param offset the event's offset, not null
 * @param transaction the chunk as a transaction (see above), not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param table the table, named as the publication publishes it (a partitioned table's root when
 *     its publication has publish_via_partition_root), not null
 * @param after the row, every published column, not null
 * @param snapshot the snapshot and chunk the row came from, not null
 */
public record ReadEvent(
    CdcOffset offset,
    TransactionInfo transaction,
    PgLsn lsn,
    TableId table,
    Row after,
    SnapshotInfo snapshot)
    implements RowChange {

  /**
   * @throws NullPointerException if a field is null
   * @throws IllegalArgumentException if the offset is not a snapshot read's
   */
  public ReadEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(lsn, "lsn");
    Objects.requireNonNull(table, "table");
    Objects.requireNonNull(after, "after");
    Objects.requireNonNull(snapshot, "snapshot");
    if (!offset.isSnapshotRead()) {
      throw new IllegalArgumentException("offset " + offset + " is not a snapshot read's");
    }
  }

  /**
   * A read row whose {@link #lsn()} is its snapshot's {@link SnapshotInfo#consistentWith()}, the
   * LSN a source gives every read row.
   *
   * @param offset the event's offset, not null
   * @param transaction the chunk as a transaction, not null
   * @param table the table, not null
   * @param after the row, not null
   * @param snapshot the snapshot and chunk, not null
   * @throws NullPointerException if a field is null
   * @throws IllegalArgumentException if the offset is not a snapshot read's
   */
  public ReadEvent(
      CdcOffset offset,
      TransactionInfo transaction,
      TableId table,
      Row after,
      SnapshotInfo snapshot) {
    this(
        offset,
        transaction,
        Objects.requireNonNull(snapshot, "snapshot").consistentWith(),
        table,
        after,
        snapshot);
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.READ;
  }

  @Override
  public Row key() {
    return after.keyColumns();
  }
}
