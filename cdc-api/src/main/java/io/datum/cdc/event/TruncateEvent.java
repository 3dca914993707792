package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import java.util.List;
import java.util.Objects;

/**
 * One TRUNCATE statement (pgoutput Truncate message), one event for all the tables it truncated; or
 * a snapshot's reset of one table without a key.
 *
 * <p><b>A snapshot's reset</b> ({@link #snapshot()} not null, {@link #isSnapshotReset()}): a table
 * without a primary key or replica identity index cannot be read in chunks matched to the changes
 * the stream delivers meanwhile, so a snapshot of it that is asked for while streaming (or an
 * initial snapshot resumed after a crash) reads it whole at one position of the stream, {@link
 * SnapshotInfo#consistentWith()}: this event comes first, then the table's rows as {@link
 * ReadEvent}s of the same snapshot, then the stream's changes from that position on. A consumer
 * applies it as a TRUNCATE of the table: it drops every row it holds of it, the read rows that
 * follow are the table's content at that position, and replaying every event in order leaves the
 * consumer's table equal to the source's as a multiset of rows. The reset is acknowledged like a
 * read row ({@link CdcOffset#isSnapshotRead()} is true); until it and every read row after it are
 * acknowledged, a restart reads the table again, with a new reset. Its {@link #transaction()}
 * describes the reset as a read row's does its chunk (xid 0, both LSNs the position, one event);
 * {@code cascade} and {@code restartIdentity} are false.
 *
 * @param offset the event's offset, not null
 * @param transaction the transaction, not null
 * @param lsn the change's WAL position ({@link ChangeEvent#lsn()}), not null
 * @param tables the truncated tables, in the order PostgreSQL sent them; copied, not empty; for a
 *     snapshot's reset the one table
 * @param cascade true if TRUNCATE ... CASCADE (option bit 1)
 * @param restartIdentity true if TRUNCATE ... RESTART IDENTITY (option bit 2)
 * @param snapshot null for a TRUNCATE the stream decoded; for a snapshot's reset, the snapshot and
 *     the position the table's content is replaced at
 */
public record TruncateEvent(
    CdcOffset offset,
    TransactionInfo transaction,
    PgLsn lsn,
    List<TableId> tables,
    boolean cascade,
    boolean restartIdentity,
    SnapshotInfo snapshot)
    implements ChangeEvent {

  /**
   * @throws NullPointerException if {@code offset}, {@code transaction} or {@code tables} is null
   * @throws IllegalArgumentException if a snapshot's reset names other than one table, or its
   *     offset is not a snapshot read's
   */
  public TruncateEvent {
    Objects.requireNonNull(offset, "offset");
    Objects.requireNonNull(transaction, "transaction");
    Objects.requireNonNull(lsn, "lsn");
    tables = List.copyOf(tables);
    if (snapshot != null && (tables.size() != 1 || !offset.isSnapshotRead())) {
      throw new IllegalArgumentException(
          "a snapshot's reset names one table and has a snapshot read's offset; got "
              + tables
              + " at "
              + offset);
    }
  }

  /**
   * A TRUNCATE the stream decoded, at its own LSN.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param lsn the TRUNCATE's WAL position ({@link ChangeEvent#lsn()}), not null
   * @param tables the truncated tables, not empty
   * @param cascade true if TRUNCATE ... CASCADE
   * @param restartIdentity true if TRUNCATE ... RESTART IDENTITY
   * @throws NullPointerException if {@code offset}, {@code transaction}, {@code lsn} or {@code
   *     tables} is null
   */
  public TruncateEvent(
      CdcOffset offset,
      TransactionInfo transaction,
      PgLsn lsn,
      List<TableId> tables,
      boolean cascade,
      boolean restartIdentity) {
    this(offset, transaction, lsn, tables, cascade, restartIdentity, null);
  }

  /**
   * An event whose {@link #lsn()} is its snapshot's {@link SnapshotInfo#consistentWith()} for a
   * snapshot's reset, else its transaction's {@link TransactionInfo#commitLsn()}: for events built
   * outside a source (a handler's tests, a replay of stored events), which have no WAL position of
   * their own. A source always gives each TRUNCATE its own LSN.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param tables the truncated tables, not empty
   * @param cascade true if TRUNCATE ... CASCADE
   * @param restartIdentity true if TRUNCATE ... RESTART IDENTITY
   * @param snapshot null, or the snapshot of a reset
   * @throws NullPointerException if {@code offset}, {@code transaction} or {@code tables} is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public TruncateEvent(
      CdcOffset offset,
      TransactionInfo transaction,
      List<TableId> tables,
      boolean cascade,
      boolean restartIdentity,
      SnapshotInfo snapshot) {
    this(
        offset,
        transaction,
        snapshot != null ? snapshot.consistentWith() : Events.commitLsn(transaction),
        tables,
        cascade,
        restartIdentity,
        snapshot);
  }

  /**
   * A TRUNCATE whose {@link #lsn()} is its transaction's {@link TransactionInfo#commitLsn()}, for
   * events built outside a source.
   *
   * @param offset the event's offset, not null
   * @param transaction the transaction, not null
   * @param tables the truncated tables, not empty
   * @param cascade true if TRUNCATE ... CASCADE
   * @param restartIdentity true if TRUNCATE ... RESTART IDENTITY
   * @throws NullPointerException if {@code offset}, {@code transaction} or {@code tables} is null
   */
  public TruncateEvent(
      CdcOffset offset,
      TransactionInfo transaction,
      List<TableId> tables,
      boolean cascade,
      boolean restartIdentity) {
    this(offset, transaction, tables, cascade, restartIdentity, null);
  }

  /** Returns true if this is a snapshot's reset of a table without a key (see above). */
  public boolean isSnapshotReset() {
    return snapshot != null;
  }

  @Override
  public ChangeKind kind() {
    return ChangeKind.TRUNCATE;
  }
}
