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
 * @param snapshotChunk 0 for a change from the replication stream; for a row read by a snapshot
 *     ({@link io.datum.cdc.event.ReadEvent}), the source's number of the chunk it was read in,
 *     positive and unique within the running source. A read row's {@code eventIndex} and {@code
 *     eventCount} are its position in the chunk and the chunk's row count, both LSNs the chunk's
 *     consistent position, its xid 0.
 */
public record CdcOffset(
    String slot,
    PgLsn txEndLsn,
    PgLsn commitLsn,
    long xid,
    int eventIndex,
    int eventCount,
    long snapshotChunk) {

  /**
   * The offset of a change from the replication stream ({@code snapshotChunk} 0).
   *
   * @param slot the slot
   * @param txEndLsn the transaction's end LSN
   * @param commitLsn the commit record's LSN
   * @param xid the transaction id
   * @param eventIndex the event's position in the transaction
   * @param eventCount the transaction's event count
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if an LSN is null
   * @throws IllegalArgumentException as the canonical constructor
   */
  public CdcOffset(
      String slot, PgLsn txEndLsn, PgLsn commitLsn, long xid, int eventIndex, int eventCount) {
    this(slot, txEndLsn, commitLsn, xid, eventIndex, eventCount, 0);
  }

  /**
   * Validates the fields.
   *
   * @throws CdcConfigurationException if the slot name is invalid
   * @throws NullPointerException if an LSN is null
   * @throws IllegalArgumentException if {@code eventCount < 1}, {@code eventIndex} is outside
   *     {@code [0, eventCount)}, {@code xid} is outside the unsigned 32-bit range, {@code
   *     commitLsn} is after {@code txEndLsn}, or {@code snapshotChunk} is negative; the message
   *     gives the values
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
    if (snapshotChunk < 0) {
      throw new IllegalArgumentException("snapshotChunk " + snapshotChunk + " is negative");
    }
    if (commitLsn.isAfter(txEndLsn)) {
      throw new IllegalArgumentException(
          "commitLsn " + commitLsn + " is after txEndLsn " + txEndLsn);
    }
  }

  /** Returns true if this is the offset of a row read by a snapshot (a nonzero chunk). */
  public boolean isSnapshotRead() {
    return snapshotChunk != 0;
  }

  /** Returns true if this is the last event of its transaction (of its chunk, for a read row). */
  public boolean isLastInTransaction() {
    return eventIndex == eventCount - 1;
  }

  @Override
  public String toString() {
    if (snapshotChunk != 0) {
      return slot + "@snapshot chunk " + snapshotChunk + '#' + eventIndex + '/' + eventCount;
    }
    return slot + '@' + txEndLsn + '#' + eventIndex + '/' + eventCount + " (xid " + xid + ')';
  }
}
