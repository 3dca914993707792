package io.datum.cdc.core.assembly;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.pgoutput.ChangeListener;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.core.relation.ValueDecodingException;
import io.datum.cdc.core.relation.ValueFailure;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;

/**
 * The events of one committed transaction, decoded one at a time from its {@link TransactionBuffer}
 * as the hand-off takes them, so that a transaction larger than memory is never decoded at once.
 * Events whose index the checkpoint store lists as acknowledged are skipped (their messages are
 * read but not decoded). A change with a column value that does not decode is reported to the
 * {@link DecodeFailures} of the source's policy: delivered with raw values, skipped, or stopping.
 *
 * <p>Also the {@link ChangeListener} {@link PgOutputDecoder#decodeChange} calls back with the
 * decoded change, which becomes the event with the next offset.
 */
final class EventDelivery implements ChangeListener, TransactionBuffer.ChangeSink, AutoCloseable {

  private final String slot;
  private final PgOutputDecoder decoder;
  private final TransactionBuffer.Replay replay;
  private final TransactionInfo info;
  private final BitSet alreadyAcknowledged;
  private final DecodeFailures failures;
  private int index;
  private ChangeEvent next;
  private boolean decodeNext;
  private long lsn;

  /**
   * @param slot the slot, for offsets
   * @param decoder the connection's decoder, for {@link PgOutputDecoder#decodeChange}
   * @param buffer the transaction's changes; closed with this delivery
   * @param info the transaction, its event count equal to the buffer's count
   * @param alreadyAcknowledged indexes to skip, or null
   * @param failures where changes with values that do not decode are reported
   */
  EventDelivery(
      String slot,
      PgOutputDecoder decoder,
      TransactionBuffer buffer,
      TransactionInfo info,
      BitSet alreadyAcknowledged,
      DecodeFailures failures) {
    this.slot = slot;
    this.failures = failures;
    this.decoder = decoder;
    this.replay = buffer == null ? null : buffer.replay();
    this.info = info;
    this.alreadyAcknowledged = alreadyAcknowledged;
  }

  /** A delivery of one event that is already built. */
  static EventDelivery of(ChangeEvent event) {
    EventDelivery d =
        new EventDelivery(
            event.offset().slot(), null, null, event.transaction(), null, DecodeFailures.STOP);
    d.next = event;
    return d;
  }

  /**
   * Returns the next event, decoding it if needed, without removing it.
   *
   * @return the event, or null when the transaction has no more
   */
  ChangeEvent peek() {
    while (next == null && replay != null && index < info.eventCount()) {
      decodeNext = alreadyAcknowledged == null || !alreadyAcknowledged.get(index);
      if (!replay.next(this)) {
        throw new IllegalStateException(
            "transaction xid "
                + info.xid()
                + " has "
                + index
                + " buffered changes, expected "
                + info.eventCount());
      }
      index++;
    }
    return next;
  }

  /** Removes the event {@link #peek} returned. */
  void advance() {
    next = null;
  }

  @Override
  public void accept(ByteBuffer message, boolean hasXid, RelationInfo[] relations, long lsn) {
    if (!decodeNext) {
      return;
    }
    this.lsn = lsn;
    try {
      decoder.decodeChange(message, hasXid, relations, this);
    } catch (ValueDecodingException e) {
      if (!failures.skips()) {
        throw e;
      }
      next = null;
      failures.skipped(offset(), e);
      return;
    }
    List<ValueFailure> raw = decoder.takeFailures();
    if (raw != null) {
      failures.delivered(offset(), raw);
    }
  }

  @Override
  public void close() {
    if (replay != null) {
      replay.close();
    }
  }

  private CdcOffset offset() {
    return new CdcOffset(
        slot, info.txEndLsn(), info.commitLsn(), info.xid(), index, info.eventCount());
  }

  @Override
  public void insert(RelationInfo relation, Row newRow) {
    next = new InsertEvent(offset(), info, PgLsn.of(lsn), relation.table(), newRow);
  }

  @Override
  public void update(RelationInfo relation, Row oldRow, boolean oldRowIsFull, Row newRow) {
    next = new UpdateEvent(offset(), info, PgLsn.of(lsn), relation.table(), oldRow, newRow);
  }

  @Override
  public void delete(RelationInfo relation, Row oldRow, boolean oldRowIsFull) {
    next = new DeleteEvent(offset(), info, PgLsn.of(lsn), relation.table(), oldRow);
  }

  @Override
  public void truncate(List<RelationInfo> relations, boolean cascade, boolean restartIdentity) {
    List<TableId> tables = new ArrayList<>(relations.size());
    for (RelationInfo r : relations) {
      tables.add(r.table());
    }
    next = new TruncateEvent(offset(), info, PgLsn.of(lsn), tables, cascade, restartIdentity);
  }

  @Override
  public void message(PgLsn lsn, String prefix, byte[] content) {
    // the message's own LSN field, already decoded: the same position as the XLogData's WAL start
    next = new MessageEvent(offset(), info, lsn, prefix, content, true);
  }
}
