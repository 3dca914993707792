package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements.ReadTask;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Online snapshots: reads chunks of tables while the source streams, and interleaves their rows
 * with the stream so that no read row is delivered after a newer change of its key. No write to any
 * user table, no signal table: the low and high watermarks are logical decoding messages ({@link
 * SnapshotMessages}), and which rows a change supersedes is decided by transaction visibility
 * against the chunk's own snapshot, not by LSN alone.
 *
 * <p>One chunk at a time, on a thread of its own ({@code datum-cdc-snapshot-<slot>}) with its own
 * connection:
 *
 * <ol>
 *   <li>write the low watermark L (PostgreSQL 17+: non-transactional and flushed, decoded at its
 *       own WAL position; before: transactional, in a transaction of its own);
 *   <li>{@code BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY}; {@code pg_current_snapshot()} as
 *       its first statement, the snapshot S every later statement of the transaction uses; read the
 *       next chunk in key order; commit;
 *   <li>write the high watermark H.
 * </ol>
 *
 * <p>The replication thread meanwhile passes every event through {@link #observe}: between L and H
 * it records, for the chunk's table, the transaction and key of each change. At H, for every key
 * changed by a transaction S does not see (that change is newer than the row read, and was
 * delivered before H): if those changes are all updates that kept the key, the row is delivered
 * with their new values applied (as new as the stream at H; it keeps the TOASTed values pgoutput
 * left out of them); otherwise (an insert, a delete, a key change) it is left out, the change
 * delivered already carrying the newer state. The rest is delivered as read rows at H's position,
 * before anything after H. A transaction S sees has its effect in the row read already.
 *
 * <p>The hazard of LSN windows, a transaction whose commit record precedes L but which is not yet
 * visible to S (synchronous replication waits for the standby after writing the commit record and
 * after marking clog, before the transaction becomes visible: xact.c, {@code
 * RecordTransactionCommit}; procarray.c then still has it running), is handled: the stream
 * delivered such a transaction before L, yet S does not see it (it is in S's xip, or at or after
 * S's xmax, since the latest completed transaction is older). The replication thread keeps the xids
 * of the last 131,072 transactions it delivered with row changes; if one delivered before L is not
 * visible to S, the chunk is discarded and read again once it is; nothing stale is delivered and
 * nothing is lost.
 *
 * <p>Not thread-safe beyond this split: {@link #observe} and {@link #consume} run on the
 * replication thread, the reading on the snapshot thread; they meet in a concurrent map of pending
 * chunks and a future per chunk.
 */
public final class OnlineSnapshots implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(OnlineSnapshots.class);

  /** Everything the reading needs from the source. */
  public interface Connections {
    /**
     * Opens a plain (not replication) connection to the source's database.
     *
     * @return the connection, in auto-commit mode
     * @throws SQLException if connecting fails
     */
    Connection open() throws SQLException;
  }

  private final String slot;
  private final String publication;
  private final SnapshotAcknowledgements tracker;
  private final Connections connections;
  private final TableReader reader;
  private final int chunkRows;
  private final long chunkBytes;
  private final boolean flushMessages;
  private final String nonce = UUID.randomUUID().toString().substring(0, 8);
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Object wake = new Object();
  private volatile boolean closed;
  private volatile Thread thread;
  private volatile CdcException failure;
  private final Map<TableId, SnapshotTable> tables = new HashMap<>();
  private long serial;
  private volatile long chunksRead;
  private volatile long chunksRetried;

  // replication thread only
  private ChunkWindow window;
  private final RecentTransactions recent = new RecentTransactions();

  /** A chunk between its low and high watermark. */
  private static final class Pending {
    final long serial;
    final ReadTask task;
    final SnapshotTable table;
    volatile PgSnapshot snapshot;
    volatile ChunkRows rows;
    final CompletableFuture<Boolean> verdict = new CompletableFuture<>();

    Pending(long serial, ReadTask task, SnapshotTable table) {
      this.serial = serial;
      this.task = task;
      this.table = table;
    }
  }

  /**
   * @param slot the source's slot
   * @param publication the publication the tables must be published by
   * @param tracker the source's snapshot acknowledgements, holding the ranges to read
   * @param connections opens the reading connection
   * @param reader reads and decodes chunks
   * @param chunkRows rows per chunk
   * @param chunkBytes bytes of row text per chunk, at most (a chunk ends early past them)
   * @param flushMessages write the watermarks non-transactional with {@code flush => true}
   *     (PostgreSQL 17+), else as transactional messages in transactions of their own; either way
   *     an idle server sends them at once
   */
  public OnlineSnapshots(
      String slot,
      String publication,
      SnapshotAcknowledgements tracker,
      Connections connections,
      TableReader reader,
      int chunkRows,
      long chunkBytes,
      boolean flushMessages) {
    this.slot = slot;
    this.publication = publication;
    this.tracker = tracker;
    this.connections = connections;
    this.reader = reader;
    this.chunkRows = chunkRows;
    this.chunkBytes = chunkBytes;
    this.flushMessages = flushMessages;
  }

  /** Starts the snapshot thread; it reads whenever a table has ranges left. Idempotent. */
  public synchronized void start() {
    if (thread != null || closed) {
      return;
    }
    Thread t = new Thread(this::runReader, "datum-cdc-snapshot-" + slot);
    t.setDaemon(true);
    thread = t;
    t.start();
  }

  /** Returns the failure that ended the snapshot thread, or null. */
  public CdcException failure() {
    return failure;
  }

  /**
   * Returns chunks read and chunks read again (discarded for the visibility hazard or overflow).
   */
  public long[] chunkCounts() {
    return new long[] {chunksRead, chunksRetried};
  }

  /** Tells the snapshot thread that ranges were added. */
  public void wakeUp() {
    synchronized (wake) {
      wake.notifyAll();
    }
  }

  @Override
  public void close() {
    closed = true;
    wakeUp();
    for (Pending p : pending.values()) {
      p.verdict.complete(false);
    }
    Thread t = thread;
    if (t != null && t != Thread.currentThread()) {
      try {
        t.join(TimeUnit.SECONDS.toMillis(10));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /**
   * The replication connection was lost (called on the replication thread before it reconnects):
   * the open window and the chunks between their watermarks are given up and read again.
   */
  public void connectionLost() {
    window = null;
    for (Pending p : pending.values()) {
      p.verdict.complete(false);
    }
  }

  // ---- the snapshot thread ------------------------------------------------------------------

  private void runReader() {
    long backoff = 50;
    Connection c = null;
    try {
      while (!closed) {
        ReadTask task = nextTask();
        if (task == null) {
          continue;
        }
        try {
          if (c == null || c.isClosed()) {
            c = connections.open();
            TableReader.prepareSession(c, reader.timeZone());
            try (Statement st = c.createStatement()) {
              st.execute("SET synchronous_commit = local");
            }
          }
          SnapshotTable table = table(c, task.range().table());
          if (table == null) {
            continue;
          }
          InitialSnapshot.awaitRoom(tracker, slot);
          boolean delivered = readChunk(c, task, table);
          if (delivered) {
            backoff = 50;
          } else if (!closed) {
            chunksRetried++;
            synchronized (wake) {
              wake.wait(backoff);
            }
            backoff = Math.min(backoff * 2, 5_000);
          }
        } catch (SQLException e) {
          if (closed) {
            return;
          }
          LOG.warn(
              "slot {}: reading a snapshot chunk of {} failed, retrying in {} ms: {}",
              slot,
              task.range().table(),
              backoff,
              e.toString());
          closeQuietly(c);
          c = null;
          synchronized (wake) {
            wake.wait(backoff);
          }
          backoff = Math.min(backoff * 2, 30_000);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (CdcException e) {
      failure = e;
      LOG.error("slot {}: online snapshot stopped: {}", slot, e.getMessage());
    } catch (RuntimeException e) {
      failure = new CdcException("online snapshot of slot " + slot + " failed: " + e, e);
      LOG.error("slot {}: online snapshot failed", slot, e);
    } finally {
      closeQuietly(c);
    }
  }

  /** Waits for a range to read; null after a wake-up or close. */
  private ReadTask nextTask() throws InterruptedException {
    List<ReadTask> tasks = tracker.readTasks();
    if (tasks.isEmpty()) {
      synchronized (wake) {
        if (!closed && tracker.readTasks().isEmpty()) {
          wake.wait(1_000);
        }
      }
      return null;
    }
    return tasks.get(0);
  }

  /** The table's description, from the catalog once; null (and dropped) if it cannot be read. */
  private SnapshotTable table(Connection c, TableId id) throws SQLException {
    SnapshotTable known = tables.get(id);
    if (known != null) {
      return known;
    }
    SnapshotTable table;
    try {
      table = reader.describe(c, publication, id);
    } catch (CdcConfigurationException e) {
      LOG.error(
          "slot {}: cannot snapshot {}: {}; dropped from the snapshot", slot, id, e.getMessage());
      tracker.abandon(id);
      return null;
    }
    if (table.chunkKey().isEmpty()) {
      String why =
          "cannot snapshot "
              + id
              + " while streaming: it has no primary key or replica identity index, so a change"
              + " cannot be matched to a row read. Add a primary key (its rows are then read from"
              + " the start); a table without one is read only by the initial snapshot at a new"
              + " slot's exported snapshot";
      if (SnapshotAcknowledgements.INITIAL.equals(task(id))) {
        // the initial snapshot of it was interrupted: its rows would be missing
        throw new CdcException(
            "slot "
                + slot
                + ": the initial snapshot of "
                + id
                + " was interrupted and "
                + why
                + " (or delete the slot's checkpoint and its slot to start afresh)");
      }
      LOG.error("slot {}: {}; the request is dropped", slot, why);
      tracker.abandon(id);
      return null;
    }
    tables.put(id, table);
    return table;
  }

  private String task(TableId id) {
    for (ReadTask t : tracker.readTasks()) {
      if (t.range().table().equals(id)) {
        return t.range().snapshotId();
      }
    }
    return null;
  }

  /** Reads one chunk between its watermarks; true if it was delivered. */
  private boolean readChunk(Connection c, ReadTask task, SnapshotTable table)
      throws SQLException, InterruptedException {
    long n = ++serial;
    Pending p = new Pending(n, task, table);
    pending.put(n, p);
    try {
      emit(c, true, n);
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        try (ResultSet rs = st.executeQuery("SELECT pg_current_snapshot()::text")) {
          rs.next();
          p.snapshot = PgSnapshot.parse(rs.getString(1));
        }
        p.rows =
            reader.read(
                c, table, task.after(), task.through(), chunkRows, chunkBytes, task.acknowledged());
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
      chunksRead++;
      emit(c, false, n);
      while (!closed) {
        try {
          return p.verdict.get(1, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          // the replication thread has not reached the high watermark yet
        } catch (java.util.concurrent.ExecutionException e) {
          return false;
        }
      }
      return false;
    } finally {
      pending.remove(n);
    }
  }

  private void emit(Connection c, boolean low, long n) throws SQLException {
    // PostgreSQL 17+: non-transactional, flushed at once (the flush argument), decoded at its own
    // position: a few milliseconds to the stream. Before 17 a non-transactional message waits for
    // the WAL writer or other traffic, so it is transactional, in a transaction of its own whose
    // commit flushes and wakes the walsender, and is decoded at that commit, in commit order with
    // every other transaction. The connection commits with synchronous_commit = local, so a stuck
    // synchronous standby does not hold a watermark back.
    String sql =
        flushMessages
            ? "SELECT pg_logical_emit_message(false, ?, ?, true)"
            : "SELECT pg_logical_emit_message(true, ?, ?)";
    try (PreparedStatement ps = c.prepareStatement(sql)) {
      ps.setString(1, SnapshotMessages.PREFIX);
      ps.setString(2, SnapshotMessages.watermark(slot, nonce, low, n));
      ps.executeQuery().close();
    }
  }

  // ---- the replication thread ---------------------------------------------------------------

  /**
   * Sees one event on its way to the handler, in stream order (before it is offered): records what
   * the open window needs, and the xids of recent changes to tables being snapshotted.
   *
   * @param event a change event from the stream (not a read row, not datum-cdc's own message)
   */
  public void observe(ChangeEvent event) {
    long xid = event.transaction().xid();
    ChunkWindow win = window;
    if (win != null) {
      win.seen(xid);
    }
    if (event instanceof RowChange change) {
      recent.remember(xid);
      if (win != null && change.table().equals(win.table())) {
        win.record(xid, change);
      }
    } else if (event instanceof TruncateEvent truncate) {
      recent.remember(xid);
      if (win != null && truncate.tables().contains(win.table())) {
        win.truncatedBy(xid);
      }
    }
  }

  /**
   * Handles datum-cdc's own message (watermarks of this source, snapshot requests for its slot);
   * anything else is left alone.
   *
   * @param event an event from the stream
   * @param requestsAllowed whether requests in the WAL are honoured (snapshot mode on-request)
   * @param out receives the read rows to deliver now, in order (at a high watermark)
   * @return true if the event was datum-cdc's message (not to be delivered; the caller acknowledges
   *     it)
   */
  public boolean consume(ChangeEvent event, boolean requestsAllowed, Consumer<ReadEvent> out) {
    if (!(event instanceof MessageEvent m) || !SnapshotMessages.PREFIX.equals(m.prefix())) {
      return false;
    }
    SnapshotMessages.Parsed parsed;
    try {
      parsed = SnapshotMessages.parse(m.content());
    } catch (CdcConfigurationException e) {
      LOG.warn(
          "slot {}: ignored a message at {}: {}", slot, m.offset().commitLsn(), e.getMessage());
      return true;
    }
    if (!parsed.slot().equals(slot)) {
      return true;
    }
    if (parsed.kind().equals("snapshot")) {
      if (!requestsAllowed) {
        LOG.warn(
            "slot {}: ignored a snapshot request for {} at {}: the source's snapshot modes do not"
                + " include on-request (snapshot(SnapshotMode.ON_REQUEST), pgcdc --snapshot"
                + " on-request)",
            slot,
            parsed.tables(),
            m.offset().commitLsn());
        return true;
      }
      request("request-" + m.offset().commitLsn(), parsed.tables());
      return true;
    }
    if (!parsed.nonce().equals(nonce)) {
      return true; // an earlier run's, or another source's on the same slot name elsewhere
    }
    Pending p = pending.get(parsed.chunk());
    if (p == null) {
      return true;
    }
    if (parsed.low()) {
      window = new ChunkWindow(p.serial, p.table);
      return true;
    }
    ChunkWindow win = window;
    window = null;
    if (win == null || win.chunk() != p.serial) {
      p.verdict.complete(false);
      return true;
    }
    List<ReadEvent> events = decide(win, p, m.offset().commitLsn());
    if (events == null) {
      p.verdict.complete(false);
      return true;
    }
    events.forEach(out);
    p.verdict.complete(true);
    return true;
  }

  /**
   * Adds tables to snapshot online.
   *
   * @param snapshotId the snapshot's id
   * @param requested the tables
   * @return the tables whose snapshot was in progress already
   */
  public List<TableId> request(String snapshotId, List<TableId> requested) {
    List<TableId> busy = tracker.add(snapshotId, requested);
    if (!busy.isEmpty()) {
      LOG.warn(
          "slot {}: snapshot {} asked for {}, whose snapshot is in progress already; it"
              + " continues",
          slot,
          snapshotId,
          busy);
    }
    if (busy.size() < requested.size()) {
      LOG.info("slot {}: snapshot {} of {} requested", slot, snapshotId, requested);
    }
    wakeUp();
    return busy;
  }

  /** The rows the chunk delivers at its high watermark, or null to read it again. */
  private List<ReadEvent> decide(ChunkWindow win, Pending p, PgLsn at) {
    PgSnapshot s = p.snapshot;
    ChunkRows rows = p.rows;
    if (s == null || rows == null || win.overflow() || win.keyMissing()) {
      LOG.debug(
          "slot {}: chunk {} of {} read again (overflow {}, key missing {})",
          slot,
          p.serial,
          p.table.table(),
          win.overflow(),
          win.keyMissing());
      return null;
    }
    // a transaction the stream delivered before the low watermark that the chunk's snapshot does
    // not see: committed in the WAL, not yet visible (it is in S's xip, or at or after its xmax)
    long hidden = recent.firstNotVisible(win, s);
    if (hidden != 0) {
      LOG.info(
          "slot {}: chunk {} of {}: transaction {} was delivered before the low watermark but"
              + " is not visible to the chunk's snapshot {} (its commit waits, e.g. for a"
              + " synchronous standby); reading the chunk again",
          slot,
          p.serial,
          p.table.table(),
          hidden,
          s);
      return null;
    }
    List<Row> keep = new ArrayList<>(rows.rows().size());
    List<List<String>> keepKeys = new ArrayList<>(rows.rows().size());
    if (!win.truncatedUnseen(s)) {
      Map<ChunkWindow.Key, List<Integer>> newer = win.newerChanges(s);
      for (int i = 0; i < rows.rows().size(); i++) {
        Row row = rows.rows().get(i);
        Row delivered = win.current(row, newer);
        if (delivered != null) {
          keep.add(delivered);
          keepKeys.add(rows.keys().get(i));
        }
      }
    }
    ChunkRows delivered =
        new ChunkRows(keep, keepKeys, rows.skipped(), rows.readThrough(), rows.endsRange());
    return ReadEvents.register(tracker, slot, p.task.range(), delivered, at, Instant.now());
  }

  private static void closeQuietly(Connection c) {
    if (c != null) {
      try {
        c.close();
      } catch (SQLException e) {
        LOG.debug("closing a snapshot connection: {}", e.toString());
      }
    }
  }
}
