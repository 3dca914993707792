package io.datum.cdc.event;

import io.datum.cdc.PgLsn;
import java.time.Instant;
import java.util.Objects;

/**
 * The committed transaction an event belongs to; shared by all its events.
 *
 * @param xid the transaction id, unsigned 32-bit
 * @param commitLsn the LSN of the commit record (Commit's {@code commit_lsn})
 * @param txEndLsn the end LSN of the commit record (Commit's {@code end_lsn})
 * @param commitTime the commit timestamp, microsecond precision (Commit's {@code commit_ts})
 * @param origin the replication origin name if an Origin message preceded the changes, else null
 * @param eventCount the number of events delivered for the transaction, at least 1
 */
public record TransactionInfo(
    long xid, PgLsn commitLsn, PgLsn txEndLsn, Instant commitTime, String origin, int eventCount) {

  /**
   * @throws NullPointerException if an LSN or the commit time is null
   */
  public TransactionInfo {
    Objects.requireNonNull(commitLsn, "commitLsn");
    Objects.requireNonNull(txEndLsn, "txEndLsn");
    Objects.requireNonNull(commitTime, "commitTime");
  }
}
