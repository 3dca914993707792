package io.datum.cdc.core.internal;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TableId;
import io.datum.cdc.event.TransactionInfo;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Groups the decoded messages of one transaction (Begin .. Commit) and, at Commit, registers the
 * transaction with the {@link FeedbackCoordinator} and turns its changes into events with their
 * {@link CdcOffset}s. An offset needs the transaction's event count, so a transaction is buffered
 * until its Commit; pgoutput sends a transaction only once it has committed (PostgreSQL docs, 55.5
 * Logical Streaming Replication Protocol), so nothing uncommitted is ever delivered.
 *
 * <p>Used by the replication loop thread only. Events ready for delivery wait in {@link #ready()}.
 */
final class TransactionAssembler implements PgOutputListener {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionAssembler.class);

  private final String slot;
  private final FeedbackCoordinator coordinator;
  private final ArrayDeque<ChangeEvent> ready = new ArrayDeque<>();
  private final List<PendingChange> changes = new ArrayList<>();

  private boolean inTransaction;
  private long xid;
  private Instant commitTime;
  private String origin;
  private long transactionsDelivered;
  private long transactionsSkipped;

  TransactionAssembler(String slot, FeedbackCoordinator coordinator) {
    this.slot = slot;
    this.coordinator = coordinator;
  }

  /** Events of committed transactions waiting for the hand-off, in commit order. */
  ArrayDeque<ChangeEvent> ready() {
    return ready;
  }

  /** Returns true if no transaction is open and no event waits for delivery. */
  boolean isIdle() {
    return !inTransaction && ready.isEmpty();
  }

  long transactionsDelivered() {
    return transactionsDelivered;
  }

  long transactionsSkipped() {
    return transactionsSkipped;
  }

  @Override
  public void begin(PgLsn finalLsn, Instant commitTime, long xid) {
    if (inTransaction) {
      throw new CdcDecodingException(
          "Begin ('B') of xid " + xid + " while xid " + this.xid + " is still open");
    }
    inTransaction = true;
    this.xid = xid;
    this.commitTime = commitTime;
    this.origin = null;
    changes.clear();
  }

  @Override
  public void commit(int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime) {
    requireTransaction("Commit ('C')");
    inTransaction = false;
    int count = changes.size();
    if (coordinator.isAtOrBeforeWatermark(endLsn)) {
      // PostgreSQL writes confirmed_flush_lsn lazily and may resend what we already processed
      LOG.debug("dropping transaction xid {} at {}: at or before the watermark", xid, endLsn);
      transactionsSkipped++;
      changes.clear();
      return;
    }
    boolean redelivered = coordinator.wasDeliveredBefore(endLsn);
    BitSet alreadyAcknowledged = coordinator.register(endLsn, count);
    transactionsDelivered++;
    if (count == 0) {
      return;
    }
    TransactionInfo info =
        new TransactionInfo(xid, commitLsn, endLsn, commitTime, origin, count, redelivered);
    for (int i = 0; i < count; i++) {
      if (alreadyAcknowledged != null && alreadyAcknowledged.get(i)) {
        continue;
      }
      CdcOffset offset = new CdcOffset(slot, endLsn, commitLsn, xid, i, count);
      ready.addLast(changes.get(i).toEvent(offset, info));
    }
    changes.clear();
  }

  @Override
  public void origin(PgLsn originLsn, String name) {
    requireTransaction("Origin ('O')");
    this.origin = name;
  }

  @Override
  public void relation(RelationInfo relation) {
    // the decoder keeps the relation cache
  }

  @Override
  public void type(int oid, String namespace, String name) {
    // the decoder keeps the type cache
  }

  @Override
  public void insert(RelationInfo relation, Row newRow) {
    requireTransaction("Insert ('I')");
    changes.add(new PendingChange(Kind.INSERT, relation.table(), null, newRow, null, false, false));
  }

  @Override
  public void update(RelationInfo relation, Row oldRow, boolean oldRowIsFull, Row newRow) {
    requireTransaction("Update ('U')");
    changes.add(new PendingChange(Kind.UPDATE, relation.table(), oldRow, newRow, null, false, false));
  }

  @Override
  public void delete(RelationInfo relation, Row oldRow, boolean oldRowIsFull) {
    requireTransaction("Delete ('D')");
    changes.add(new PendingChange(Kind.DELETE, relation.table(), oldRow, null, null, false, false));
  }

  @Override
  public void truncate(List<RelationInfo> relations, boolean cascade, boolean restartIdentity) {
    requireTransaction("Truncate ('T')");
    List<TableId> tables = new ArrayList<>(relations.size());
    for (RelationInfo r : relations) {
      tables.add(r.table());
    }
    changes.add(new PendingChange(Kind.TRUNCATE, null, null, null, tables, cascade, restartIdentity));
  }

  @Override
  public void message(boolean transactional, PgLsn lsn, String prefix, byte[] content) {
    if (transactional) {
      requireTransaction("Message ('M')");
      changes.add(new PendingChange(Kind.MESSAGE, null, null, null, List.of(), true, false, prefix, content));
      return;
    }
    // A non-transactional message is its own one-event transaction. The walsender skips it on
    // reconnect once the confirmed position is after its LSN (decode.c, logicalmsg_decode), so
    // its end is one byte after it.
    PgLsn end = PgLsn.of(lsn.asLong() + 1);
    if (coordinator.isAtOrBeforeWatermark(end)) {
      transactionsSkipped++;
      return;
    }
    boolean redelivered = coordinator.wasDeliveredBefore(end);
    BitSet alreadyAcknowledged = coordinator.register(end, 1);
    transactionsDelivered++;
    if (alreadyAcknowledged != null && alreadyAcknowledged.get(0)) {
      return;
    }
    TransactionInfo info = new TransactionInfo(0, lsn, end, Instant.now(), null, 1, redelivered);
    CdcOffset offset = new CdcOffset(slot, end, lsn, 0, 0, 1);
    ready.addLast(new MessageEvent(offset, info, prefix, content, false));
  }

  private void requireTransaction(String message) {
    if (!inTransaction) {
      throw new CdcDecodingException(message + " outside a transaction (no Begin before it)");
    }
  }

  private enum Kind {
    INSERT,
    UPDATE,
    DELETE,
    TRUNCATE,
    MESSAGE
  }

  /** A decoded change waiting for its transaction's Commit. */
  private record PendingChange(
      Kind kind,
      TableId table,
      Row before,
      Row after,
      List<TableId> tables,
      boolean flag1,
      boolean flag2,
      String prefix,
      byte[] content) {

    PendingChange(
        Kind kind, TableId table, Row before, Row after, List<TableId> tables, boolean f1, boolean f2) {
      this(kind, table, before, after, tables, f1, f2, null, null);
    }

    ChangeEvent toEvent(CdcOffset offset, TransactionInfo info) {
      return switch (kind) {
        case INSERT -> new InsertEvent(offset, info, table, after);
        case UPDATE -> new UpdateEvent(offset, info, table, before, after);
        case DELETE -> new DeleteEvent(offset, info, table, before);
        case TRUNCATE -> new TruncateEvent(offset, info, tables, flag1, flag2);
        case MESSAGE -> new MessageEvent(offset, info, prefix, content, true);
      };
    }
  }
}
