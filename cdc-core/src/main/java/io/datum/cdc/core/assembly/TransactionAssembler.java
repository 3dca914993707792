package io.datum.cdc.core.assembly;

import io.datum.cdc.CdcDecodingException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.delivery.Merge;
import io.datum.cdc.core.feedback.FeedbackCoordinator;
import io.datum.cdc.core.pgoutput.PgOutputDecoder;
import io.datum.cdc.core.pgoutput.PgOutputReader;
import io.datum.cdc.core.pgoutput.TransactionListener;
import io.datum.cdc.core.relation.RelationInfo;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.TransactionInfo;
import java.nio.ByteBuffer;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.BitSet;
import java.util.HashMap;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Groups the change messages of each transaction until PostgreSQL reports it committed, then
 * registers it with the {@link FeedbackCoordinator} and hands out its events, decoded one at a
 * time, with their {@link CdcOffset}s. An offset needs the transaction's event count, so nothing of
 * a transaction is delivered before its end; nothing of an aborted transaction ever is.
 *
 * <ul>
 *   <li>Begin .. Commit: one transaction (PostgreSQL sends it once committed).
 *   <li>Stream Start/Stop blocks (protocol 2+): chunks of in-progress transactions, buffered per
 *       top-level xid until Stream Commit, dropped at Stream Abort; the abort of a subtransaction
 *       drops only its changes.
 *   <li>Begin Prepare .. Prepare, or Stream Prepare (protocol 3+, option two_phase): a prepared
 *       transaction, registered at its prepare end LSN (so the watermark cannot pass the prepare
 *       record before its events are acknowledged, and a restart receives it again), delivered at
 *       Commit Prepared, dropped at Rollback Prepared. Its offsets carry the prepare record's LSN
 *       and end LSN as {@code commitLsn} and {@code txEndLsn}, its transaction the commit time.
 * </ul>
 *
 * <p>Changes are kept undecoded in {@link TransactionBuffer}s, which spill to disk past the
 * source's memory budget; they are decoded when handed out. Used by the replication loop thread
 * only.
 */
public final class TransactionAssembler implements TransactionListener, Merge.EventQueue {

  private static final Logger LOG = LoggerFactory.getLogger(TransactionAssembler.class);

  private final String slot;
  private final FeedbackCoordinator coordinator;
  private final PgOutputDecoder decoder;
  private final TransactionBuffer.Memory memory;
  private final DecodeFailures failures;
  private final ArrayDeque<EventDelivery> ready = new ArrayDeque<>();

  /** The Begin .. Commit or Begin Prepare .. Prepare transaction being received, or null. */
  private TransactionBuffer current;

  private long xid;
  private Instant commitTime;
  private String origin;

  /** Streamed transactions in progress, by top-level xid. */
  private final Map<Long, TransactionBuffer> streamed = new HashMap<>();

  private final Map<Long, String> streamedOrigins = new HashMap<>();

  /** The transaction of the open stream block, or null. */
  private TransactionBuffer block;

  private long blockXid;

  /** Prepared transactions awaiting Commit or Rollback Prepared, by gid. */
  private final Map<String, PreparedTransaction> prepared = new HashMap<>();

  /**
   * The end LSN of the last transaction-ending message (Commit, Stream Commit, Commit or Rollback
   * Prepared) received on this connection, or the start position before the first.
   */
  private PgLsn previousTxEndLsn;

  /** The WAL start of the XLogData message being decoded: the LSN of the change it carries. */
  private long messageLsn;

  private long transactionsDelivered;
  private long transactionsSkipped;

  /** A prepared transaction; its offsets carry the prepare record's LSN and end LSN. */
  private record PreparedTransaction(
      TransactionBuffer buffer,
      long xid,
      PgLsn prepareLsn,
      PgLsn endLsn,
      String origin,
      BitSet alreadyAcknowledged,
      boolean redelivered) {}

  /**
   * @param slot the slot, for offsets
   * @param coordinator where transactions are registered
   * @param decoder the connection's decoder, its value policy set to match {@code failures}
   * @param memory the memory budget of buffered changes
   * @param failures where changes with values that do not decode are reported
   * @param start the position the connection streams from, the first transaction's {@link
   *     TransactionInfo#previousTxEndLsn()}; {@link PgLsn#ZERO} (the slot's own position, not known
   *     here) makes it null
   */
  public TransactionAssembler(
      String slot,
      FeedbackCoordinator coordinator,
      PgOutputDecoder decoder,
      TransactionBuffer.Memory memory,
      DecodeFailures failures,
      PgLsn start) {
    this.previousTxEndLsn = PgLsn.ZERO.equals(start) ? null : start;
    this.slot = slot;
    this.coordinator = coordinator;
    this.decoder = decoder;
    this.memory = memory;
    this.failures = failures;
  }

  /**
   * Decodes one pgoutput message and buffers or completes transactions.
   *
   * @param message the XLogData payload; kept while its transaction is buffered in memory
   * @param lsn the XLogData message's WAL start (pgjdbc's {@code getLastReceiveLSN()} after it was
   *     read): for a change, the LSN of its WAL record
   */
  public void accept(ByteBuffer message, long lsn) {
    this.messageLsn = lsn;
    decoder.decode(message, this);
  }

  /**
   * Returns the next event to hand out without removing it, decoding it if needed.
   *
   * @return the event, or null if no committed transaction has events waiting
   * @throws CdcDecodingException if a buffered change does not decode
   */
  @Override
  public ChangeEvent peek() {
    while (!ready.isEmpty()) {
      EventDelivery first = ready.peekFirst();
      ChangeEvent next = first.peek();
      if (next != null) {
        return next;
      }
      ready.removeFirst().close();
    }
    return null;
  }

  /** Removes the event {@link #peek} returned. */
  @Override
  public void poll() {
    ready.peekFirst().advance();
  }

  /** Returns true if no transaction is open or buffered and no event waits for delivery. */
  public boolean isIdle() {
    return current == null && streamed.isEmpty() && prepared.isEmpty() && peek() == null;
  }

  public long transactionsDelivered() {
    return transactionsDelivered;
  }

  public long transactionsSpilled() {
    return memory.spilledFiles();
  }

  /** Returns the bytes written to spill files on this assembler's connection. */
  public long bytesSpilled() {
    return memory.spilledBytes();
  }

  long transactionsSkipped() {
    return transactionsSkipped;
  }

  /** Releases every buffer (memory and spill files); called when the connection closes. */
  public void close() {
    if (current != null) {
      current.close();
    }
    streamed.values().forEach(TransactionBuffer::close);
    prepared.values().forEach(p -> p.buffer().close());
    ready.forEach(EventDelivery::close);
    streamed.clear();
    prepared.clear();
    ready.clear();
    current = null;
  }

  // ---- Begin .. Commit ----------------------------------------------------------------------

  @Override
  public void begin(PgLsn finalLsn, Instant commitTime, long xid) {
    openTransaction("Begin ('B')", xid);
    this.commitTime = commitTime;
  }

  private void openTransaction(String message, long xid) {
    if (current != null) {
      throw new CdcDecodingException(
          message + " of xid " + xid + " while xid " + this.xid + " is still open");
    }
    current = new TransactionBuffer(memory, "xid " + xid);
    this.xid = xid;
    this.origin = null;
  }

  @Override
  public void commit(int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime) {
    TransactionBuffer buffer = requireTransaction("Commit ('C')");
    current = null;
    complete(buffer, xid, commitLsn, endLsn, commitTime, origin);
    previousTxEndLsn = endLsn;
  }

  @Override
  public void origin(PgLsn originLsn, String name) {
    if (block != null) {
      streamedOrigins.put(blockXid, name);
      return;
    }
    requireTransaction("Origin ('O')");
    this.origin = name;
  }

  @Override
  public void relation(RelationInfo relation) {
    // the decoder keeps the relation cache; buffered changes keep the relation they refer to
  }

  @Override
  public void type(int oid, String namespace, String name) {
    // the decoder keeps the type cache
  }

  @Override
  public void change(ByteBuffer message, boolean hasXid, RelationInfo[] relations) {
    if (block != null) {
      block.add(message, hasXid, relations, decoder.changeXid(), messageLsn);
      return;
    }
    requireTransaction(PgOutputReader.messageName(message.get(message.position())))
        .add(message, false, relations, 0, messageLsn);
  }

  private TransactionBuffer requireTransaction(String message) {
    if (current == null) {
      throw new CdcDecodingException(message + " outside a transaction (no Begin before it)");
    }
    return current;
  }

  /**
   * Registers a finished transaction and queues its events, or drops it when it is at or before the
   * watermark (PostgreSQL writes confirmed_flush_lsn lazily and may send it again).
   */
  private void complete(
      TransactionBuffer buffer,
      long xid,
      PgLsn commitLsn,
      PgLsn endLsn,
      Instant time,
      String origin) {
    if (coordinator.isAtOrBeforeWatermark(endLsn)) {
      LOG.debug("dropping transaction xid {} at {}: at or before the watermark", xid, endLsn);
      transactionsSkipped++;
      buffer.close();
      return;
    }
    boolean redelivered = coordinator.wasDeliveredBefore(endLsn);
    BitSet alreadyAcknowledged = coordinator.register(endLsn, buffer.count(), micros(time));
    deliver(
        buffer,
        xid,
        commitLsn,
        endLsn,
        time,
        origin,
        alreadyAcknowledged,
        redelivered,
        previousTxEndLsn);
  }

  /** Microseconds since 1970-01-01 UTC, or 0 for null (unknown). */
  private static long micros(Instant time) {
    return time == null ? 0 : time.getEpochSecond() * 1_000_000 + time.getNano() / 1_000;
  }

  private void deliver(
      TransactionBuffer buffer,
      long xid,
      PgLsn commitLsn,
      PgLsn endLsn,
      Instant time,
      String origin,
      BitSet alreadyAcknowledged,
      boolean redelivered,
      PgLsn previous) {
    transactionsDelivered++;
    int count = buffer.count();
    if (count == 0) {
      buffer.close();
      return;
    }
    TransactionInfo info =
        new TransactionInfo(xid, commitLsn, endLsn, time, origin, count, redelivered, previous);
    ready.addLast(new EventDelivery(slot, decoder, buffer, info, alreadyAcknowledged, failures));
  }

  @Override
  public void nonTransactionalMessage(PgLsn lsn, String prefix, byte[] content) {
    // A non-transactional message is its own one-event transaction, ending at its LSN: pgoutput
    // reports the end of the message's WAL record (decode.c, logicalmsg_decode, passes
    // buf->endptr), and the walsender skips the message on reconnect once the confirmed position
    // is after the record's start (SnapBuildXactNeedsSkip on buf->origptr). One byte more would
    // confirm a position after the WAL's end when the message is the last record written.
    PgLsn end = lsn;
    // like Debezium, which keeps a non-transactional message as its last commit (before its record
    // is made), the message is its own predecessor and the predecessor of the next transaction
    previousTxEndLsn = end;
    if (coordinator.isAtOrBeforeWatermark(end)) {
      transactionsSkipped++;
      return;
    }
    boolean redelivered = coordinator.wasDeliveredBefore(end);
    // no commit time: the time it arrived stands in for the watermark's age
    BitSet alreadyAcknowledged = coordinator.register(end, 1, System.currentTimeMillis() * 1000);
    transactionsDelivered++;
    if (alreadyAcknowledged != null && alreadyAcknowledged.get(0)) {
      return;
    }
    TransactionInfo info =
        new TransactionInfo(0, lsn, end, Instant.now(), null, 1, redelivered, previousTxEndLsn);
    CdcOffset offset = new CdcOffset(slot, end, lsn, 0, 0, 1);
    ready.addLast(EventDelivery.of(new MessageEvent(offset, info, lsn, prefix, content, false)));
  }

  // ---- streamed transactions (protocol 2+) ----------------------------------------------------

  @Override
  public void streamStart(long xid, boolean firstSegment) {
    if (current != null) {
      throw new CdcDecodingException(
          "Stream Start ('S') of xid " + xid + " while xid " + this.xid + " is still open");
    }
    TransactionBuffer buffer = streamed.get(xid);
    if (buffer == null) {
      // a later segment of an unknown transaction cannot be completed: its first part is missing
      if (!firstSegment) {
        throw new CdcDecodingException(
            "Stream Start ('S') of xid "
                + xid
                + " is not its first segment, but no earlier"
                + " segment was received on this connection");
      }
      buffer = new TransactionBuffer(memory, "streamed xid " + xid);
      streamed.put(xid, buffer);
    }
    block = buffer;
    blockXid = xid;
  }

  @Override
  public void streamStop() {
    block = null;
  }

  @Override
  public void streamCommit(long xid, int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime) {
    TransactionBuffer buffer = takeStreamed("Stream Commit ('c')", xid);
    complete(buffer, xid, commitLsn, endLsn, commitTime, streamedOrigins.remove(xid));
    previousTxEndLsn = endLsn;
  }

  private TransactionBuffer takeStreamed(String message, long xid) {
    TransactionBuffer buffer = streamed.remove(xid);
    if (buffer == null) {
      throw new CdcDecodingException(
          message + " of xid " + xid + ", which was not streamed on this connection");
    }
    return buffer;
  }

  @Override
  public void streamAbort(long xid, long subxid, PgLsn abortLsn, Instant abortTime) {
    TransactionBuffer buffer = streamed.get(xid);
    if (buffer == null) {
      // PostgreSQL may send the abort of a transaction whose segments preceded our start
      // position; nothing of it was buffered, so nothing is lost
      LOG.debug("Stream Abort of xid {} that was not streamed on this connection", xid);
      return;
    }
    if (subxid == xid) {
      streamed.remove(xid).close();
      streamedOrigins.remove(xid);
    } else {
      buffer.abortSubtransaction(subxid);
    }
  }

  // ---- two-phase commit (protocol 3+) -----------------------------------------------------------

  @Override
  public void beginPrepare(
      PgLsn prepareLsn, PgLsn endLsn, Instant prepareTime, long xid, String gid) {
    openTransaction("Begin Prepare ('b')", xid);
  }

  @Override
  public void prepare(
      boolean streamed,
      int flags,
      PgLsn prepareLsn,
      PgLsn endLsn,
      Instant prepareTime,
      long xid,
      String gid) {
    TransactionBuffer buffer;
    String txOrigin;
    if (streamed) {
      buffer = takeStreamed("Stream Prepare ('p')", xid);
      txOrigin = streamedOrigins.remove(xid);
    } else {
      buffer = requireTransaction("Prepare ('P')");
      current = null;
      txOrigin = origin;
    }
    if (prepared.containsKey(gid)) {
      buffer.close();
      throw new CdcDecodingException(
          "Prepare of gid \""
              + gid
              + "\" (xid "
              + xid
              + ") while a"
              + " transaction with that gid is already prepared");
    }
    if (coordinator.isAtOrBeforeWatermark(endLsn)) {
      // delivered and acknowledged before: Commit Prepared will find nothing to deliver
      transactionsSkipped++;
      buffer.close();
      return;
    }
    boolean redelivered = coordinator.wasDeliveredBefore(endLsn);
    BitSet alreadyAcknowledged = coordinator.register(endLsn, buffer.count(), micros(prepareTime));
    prepared.put(
        gid,
        new PreparedTransaction(
            buffer, xid, prepareLsn, endLsn, txOrigin, alreadyAcknowledged, redelivered));
  }

  @Override
  public void commitPrepared(
      int flags, PgLsn commitLsn, PgLsn endLsn, Instant commitTime, long xid, String gid) {
    PreparedTransaction p = prepared.remove(gid);
    PgLsn before = previousTxEndLsn;
    previousTxEndLsn = endLsn;
    if (p == null) {
      // prepared before this connection's start position: the watermark is at or after its
      // prepare end, so all its events were acknowledged
      LOG.debug("Commit Prepared of gid {} (xid {}): already delivered and acknowledged", gid, xid);
      transactionsSkipped++;
      return;
    }
    deliver(
        p.buffer(),
        p.xid(),
        p.prepareLsn(),
        p.endLsn(),
        commitTime,
        p.origin(),
        p.alreadyAcknowledged(),
        p.redelivered(),
        before);
  }

  @Override
  public void rollbackPrepared(
      int flags,
      PgLsn prepareEndLsn,
      PgLsn rollbackEndLsn,
      Instant prepareTime,
      Instant rollbackTime,
      long xid,
      String gid) {
    PreparedTransaction p = prepared.remove(gid);
    previousTxEndLsn = rollbackEndLsn;
    if (p == null) {
      return; // prepared before this connection's start position, never delivered
    }
    int count = p.buffer().count();
    p.buffer().close();
    if (count > 0) {
      // nothing will be delivered: complete the registered transaction so the watermark moves on
      coordinator.acknowledgeTransaction(
          new CdcOffset(slot, p.endLsn(), p.prepareLsn(), xid, 0, count));
    }
  }
}
