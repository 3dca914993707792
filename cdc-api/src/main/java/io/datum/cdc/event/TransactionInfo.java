package io.datum.cdc.event;

import io.datum.cdc.PgLsn;
import java.time.Instant;
import java.util.Objects;

/**
 * The committed transaction an event belongs to; shared by all its events.
 *
 * @param xid the transaction id, unsigned 32-bit
 * @param commitLsn the LSN of the commit record (Commit's {@code commit_lsn}); for a transaction
 *     decoded at PREPARE TRANSACTION (option two_phase), the prepare record's LSN
 * @param txEndLsn the end LSN of the commit record (Commit's {@code end_lsn}); for a transaction
 *     decoded at PREPARE TRANSACTION, the prepare record's end LSN
 * @param commitTime the commit timestamp, microsecond precision (Commit's {@code commit_ts})
 * @param origin the replication origin name if an Origin message preceded the changes, else null
 * @param eventCount the number of events delivered for the transaction, at least 1
 * @param redelivered true if this source knows it delivered (some of) the transaction's events
 *     before: after a reconnect, or when the checkpoint store holds acknowledgements of it from
 *     before a restart. False does not prove a first delivery: events delivered but never
 *     acknowledged before a crash leave no trace, and come again with this flag false.
 * @param previousTxEndLsn the end LSN of the transaction the walsender sent before this one on the
 *     same replication connection (its Commit's {@code end_lsn}; also a transaction that delivers
 *     no event, as PostgreSQL 14 sends for transactions of unpublished tables; a non-transactional
 *     message counts as a transaction ending at its LSN, and is its own predecessor), or, for the
 *     first one after the source connected, the position it started streaming from (every
 *     transaction ending at or before it had been acknowledged); null when not known (a new
 *     checkpoint store's first transaction, a snapshot's chunk, an event built outside a source).
 *     It is the first element of Debezium's {@code source.sequence}, its last commit LSN, which
 *     Debezium also moves to a non-transactional message's LSN before emitting it. A transaction
 *     delivered again after a reconnect can get an earlier value than the first time, never a later
 *     one.
 */
public record TransactionInfo(
    long xid,
    PgLsn commitLsn,
    PgLsn txEndLsn,
    Instant commitTime,
    String origin,
    int eventCount,
    boolean redelivered,
    PgLsn previousTxEndLsn) {

  /**
   * A transaction delivered for the first time as far as the source knows.
   *
   * @param xid the transaction id
   * @param commitLsn the commit record's LSN
   * @param txEndLsn the commit record's end LSN
   * @param commitTime the commit timestamp
   * @param origin the replication origin, or null
   * @param eventCount the number of events
   * @throws NullPointerException if an LSN or the commit time is null
   */
  public TransactionInfo(
      long xid,
      PgLsn commitLsn,
      PgLsn txEndLsn,
      Instant commitTime,
      String origin,
      int eventCount) {
    this(xid, commitLsn, txEndLsn, commitTime, origin, eventCount, false, null);
  }

  /**
   * A transaction without a known predecessor ({@code previousTxEndLsn} null).
   *
   * @param xid the transaction id
   * @param commitLsn the commit record's LSN
   * @param txEndLsn the commit record's end LSN
   * @param commitTime the commit timestamp
   * @param origin the replication origin, or null
   * @param eventCount the number of events
   * @param redelivered whether the source knows it delivered the transaction before
   * @throws NullPointerException if an LSN or the commit time is null
   */
  public TransactionInfo(
      long xid,
      PgLsn commitLsn,
      PgLsn txEndLsn,
      Instant commitTime,
      String origin,
      int eventCount,
      boolean redelivered) {
    this(xid, commitLsn, txEndLsn, commitTime, origin, eventCount, redelivered, null);
  }

  /**
   * @throws NullPointerException if an LSN or the commit time is null
   */
  public TransactionInfo {
    Objects.requireNonNull(commitLsn, "commitLsn");
    Objects.requireNonNull(txEndLsn, "txEndLsn");
    Objects.requireNonNull(commitTime, "commitTime");
  }
}
