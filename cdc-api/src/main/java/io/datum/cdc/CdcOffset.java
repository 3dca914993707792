package io.datum.cdc;

import java.util.Objects;

/**
 * The position of one delivered event: which transaction of which slot, and which event of it. The
 * application hands it back to {@link CdcCheckpointHandle#acknowledge(CdcOffset)} once it has
 * durably processed the event.
 *
 * <p>A transaction is identified by its {@code txEndLsn}, the end LSN of its Commit message, which
 * is also the position reported to PostgreSQL as flushed once the transaction and all before it are
 * acknowledged (PostgreSQL docs, 55.9 Logical Replication Message Formats, "Commit").
 *
 * @param slot the replication slot the event came from; a valid slot name ({@link SlotNames})
 * @param txEndLsn the end LSN of the transaction's commit record (Commit's {@code end_lsn}; Stream
 *     Commit's for a streamed transaction; for one decoded at PREPARE TRANSACTION with the
 *     two_phase option, the prepare record's end LSN, as Prepare's {@code end_lsn})
 * @param commitLsn the LSN of the commit record itself (Commit's {@code commit_lsn}, equal to
 *     Begin's {@code final_lsn}; the prepare record's LSN for a transaction decoded at PREPARE
 *     TRANSACTION); not after {@code txEndLsn}
 * @param xid the transaction id, an unsigned 32-bit number in {@code [0, 2^32)}
 * @param eventIndex the 0-based position of the event in its transaction
 * @param eventCount the number of events the transaction delivers, at least 1
 */
public record CdcOffset(
    String slot, PgLsn txEndLsn, PgLsn commitLsn, long xid, int eventIndex, int eventCount) {

  /**
   * Validates the fields.
   *
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if an LSN is null
   * @throws IllegalArgumentException if {@code eventCount < 1}, {@code eventIndex} is outside
   *     {@code [0, eventCount)}, {@code xid} is outside the unsigned 32-bit range, or {@code
   *     commitLsn} is after {@code txEndLsn}; the message gives the values
   */
  public CdcOffset {
    SlotNames.requireValid(slot);
    Objects.requireNonNull(txEndLsn, "txEndLsn");
    Objects.requireNonNull(commitLsn, "commitLsn");
    if (eventCount < 1) {
      throw new IllegalArgumentException("eventCount must be at least 1, was " + eventCount);
    }
    if (eventIndex < 0 || eventIndex >= eventCount) {
      throw new IllegalArgumentException(
          "eventIndex " + eventIndex + " outside [0, " + eventCount + ")");
    }
    if (xid < 0 || xid > 0xFFFF_FFFFL) {
      throw new IllegalArgumentException("xid " + xid + " outside the unsigned 32-bit range");
    }
    if (commitLsn.isAfter(txEndLsn)) {
      throw new IllegalArgumentException(
          "commitLsn " + commitLsn + " is after txEndLsn " + txEndLsn);
    }
  }

  /** Returns true if this is the last event of its transaction. */
  public boolean isLastInTransaction() {
    return eventIndex == eventCount - 1;
  }

  @Override
  public String toString() {
    return slot + '@' + txEndLsn + '#' + eventIndex + '/' + eventCount + " (xid " + xid + ')';
  }
}
