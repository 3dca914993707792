package io.datum.cdc.event;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;

/**
 * One committed change, delivered to the application's handler in commit order. Acknowledge it with
 * {@link io.datum.cdc.CdcCheckpointHandle#acknowledge(CdcOffset)} passing {@link #offset()}.
 *
 * <p>The kinds are {@link InsertEvent}, {@link UpdateEvent}, {@link DeleteEvent}, {@link
 * TruncateEvent}, {@link MessageEvent} and, from a snapshot, {@link ReadEvent}; switch on {@link
 * #kind()} or use pattern matching.
 */
public sealed interface ChangeEvent permits RowChange, TruncateEvent, MessageEvent {

  /** Returns the kind of change. */
  ChangeKind kind();

  /** Returns the event's position, to pass to the checkpoint handle; never null. */
  CdcOffset offset();

  /** Returns the transaction the event belongs to; never null. */
  TransactionInfo transaction();

  /**
   * Returns the event's own WAL position; never null. It is what Debezium's PostgreSQL connector
   * reports as {@code source.lsn}.
   *
   * <ul>
   *   <li>An insert, update, delete, TRUNCATE or transactional message: the LSN the walsender sent
   *       with the change, the WAL start of the XLogData message that carried it, which is the LSN
   *       of the change's WAL record (PostgreSQL source, src/backend/replication/logical/logical.c:
   *       the change callbacks set {@code ctx->write_location = change->lsn}, which walsender.c
   *       writes into the XLogData header). For a logical decoding message that is the end of its
   *       WAL record (decode.c, {@code logicalmsg_decode}, queues it at {@code buf->endptr}).
   *       Within a transaction the LSNs do not decrease in delivery order and are not after {@link
   *       TransactionInfo#commitLsn()}. They are not unique: the rows of one multi-row WAL record
   *       (a {@code COPY}'s heap multi-insert) share its LSN, and a message's LSN (the end of its
   *       record) is also the start of the next record, so the change after it, or the commit
   *       record, has the same LSN. {@link CdcOffset#txEndLsn()} with {@link
   *       CdcOffset#eventIndex()}, not this LSN, names an event uniquely.
   *   <li>A non-transactional message: the message's LSN, also its transaction's {@link
   *       TransactionInfo#commitLsn()}.
   *   <li>A snapshot's read row ({@link ReadEvent}) or reset ({@link
   *       TruncateEvent#isSnapshotReset()}): the position the snapshot is consistent with, {@link
   *       SnapshotInfo#consistentWith()}.
   * </ul>
   *
   * <p>Transactions are delivered in commit order, so LSNs do not increase across transactions: a
   * long transaction's changes can have LSNs before those of a shorter one that committed first.
   * Order events of different transactions by {@link TransactionInfo#commitLsn()} first.
   */
  PgLsn lsn();
}
