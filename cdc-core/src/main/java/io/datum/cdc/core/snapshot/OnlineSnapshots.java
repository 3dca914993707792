package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements.ReadTask;
import io.datum.cdc.core.server.ServerRole;
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
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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

    /**
     * Opens a replication connection ({@code replication=database}, simple query mode) to the
     * source's database, for a temporary slot whose exported snapshot a table without a key is read
     * at.
     *
     * @return the connection
     * @throws SQLException if connecting fails
     */
    Connection openReplication() throws SQLException;
  }

  private final String slot;
  private final String publication;
  private final SnapshotAcknowledgements tracker;
  private final Connections connections;
  private final TableReader reader;
  private final int chunkRows;
  private final long chunkBytes;
  private final boolean flushMessages;
  private final int serverVersionNum;
  private final boolean twoPhase;
  private final ServerRole serverRole;

  /** Where the watermarks are written: the reading connection, or on a standby the primary. */
  private final WatermarkConnection watermarks;

  private final String nonce = UUID.randomUUID().toString().substring(0, 8);
  private final Map<Long, Pending> pending = new ConcurrentHashMap<>();
  private final Object wake = new Object();
  private volatile boolean closed;
  private volatile Thread thread;
  private volatile CdcException failure;
  private final Map<TableId, SnapshotTable> tables = new HashMap<>();
  private long serial;

  /** The role the reading connection logged in as, for the GRANT a permanent failure names. */
  private String role;

  private volatile long chunksRead;
  private volatile long chunksRetried;

  /** The read of a table without a key in progress, or null; see {@link #gate}. */
  private volatile Whole whole;

  // replication thread only
  private ChunkWindow window;
  private long heldSinceNanos;
  private final RecentTransactions recent = new RecentTransactions();

  /** A chunk between its low and high watermark. */
  private static final class Pending {
    final long serial;
    final ReadTask task;
    final SnapshotTable table;
    volatile PgSnapshot snapshot;

    /**
     * On a hot standby, the replay positions read before and after the snapshot was taken (its
     * visibility: {@link Visibility#ofReplay}); null on a primary.
     */
    volatile PgLsn replayedBefore;

    volatile PgLsn replayedAfter;
    volatile ChunkRows rows;
    final CompletableFuture<Boolean> verdict = new CompletableFuture<>();

    Pending(long serial, ReadTask task, SnapshotTable table) {
      this.serial = serial;
      this.task = task;
      this.table = table;
    }
  }

  /**
   * A table without a key read whole at the exported snapshot of a temporary slot: the snapshot
   * thread creates the slot and reads; the replication thread holds the stream at the slot's
   * consistent point and releases the reset and the rows there.
   */
  private static final class Whole {
    final ReadTask task;

    /** Stream events whose commit LSN is before it go on while the slot is being created. */
    final PgLsn below;

    /** The imported snapshot, set before {@link #at}. */
    volatile PgSnapshot snapshot;

    /** The temporary slot's consistent point once known: where the table's content is replaced. */
    volatile PgLsn at;

    /** Set by the snapshot thread when the read failed; the replication thread gives it up. */
    volatile boolean failed;

    /** Chunks read, in order, for the replication thread to register and release. */
    final BlockingQueue<ChunkRows> chunks = new ArrayBlockingQueue<>(2);

    /** Completed by the replication thread: true once every chunk went out, false if given up. */
    final CompletableFuture<Boolean> released = new CompletableFuture<>();

    /** Replication thread only: the reset went out. */
    boolean resetReleased;

    /** Read on a hot standby (visibility by commit position, {@link Visibility}). */
    final boolean standby;

    Whole(ReadTask task, PgLsn below, boolean standby) {
      this.task = task;
      this.below = below;
      this.standby = standby;
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
   * @param serverVersionNum the server's {@code server_version_num}: from 170000 the watermarks are
   *     written non-transactional with {@code flush => true}, else as transactional messages in
   *     transactions of their own (either way an idle server sends them at once); from 150000 a
   *     temporary slot is created with the option list syntax
   * @param twoPhase whether the stream decodes prepared transactions (two_phase): their events
   *     carry the prepare record's position, not the commit's, so while a temporary slot is created
   *     the stream holds at every event, not only from the insert position read before
   * @param serverRole the server's role: on a hot standby the watermarks are written on the primary
   *     and a chunk is read once the standby has replayed its low watermark
   */
  public OnlineSnapshots(
      String slot,
      String publication,
      SnapshotAcknowledgements tracker,
      Connections connections,
      TableReader reader,
      int chunkRows,
      long chunkBytes,
      int serverVersionNum,
      boolean twoPhase,
      ServerRole serverRole) {
    this.serverRole = serverRole;
    this.watermarks = new WatermarkConnection(serverRole, slot);
    this.slot = slot;
    this.publication = publication;
    this.tracker = tracker;
    this.connections = connections;
    this.reader = reader;
    this.chunkRows = chunkRows;
    this.chunkBytes = chunkBytes;
    this.serverVersionNum = serverVersionNum;
    this.flushMessages = serverVersionNum >= 170000;
    this.twoPhase = twoPhase;
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
   * Returns what the read of a table without a key waits for before its first row goes out, in
   * words, or null when no such read waits.
   */
  public String waiting() {
    String locked = lockWait;
    if (locked != null) {
      return locked;
    }
    String replay = watermarks.waiting();
    if (replay != null) {
      return replay;
    }
    Whole w = whole;
    if (w == null || w.resetReleased) {
      return null;
    }
    TableId table = w.task.range().table();
    PgLsn at = w.at;
    return at == null
        ? "the creation of the temporary slot for the read of "
            + table
            + " (no key): PostgreSQL waits for the transactions open when it"
            + " began to end (pg_stat_activity: wait_event transactionid)"
        : "the stream to reach " + at + ", where " + table + " (no key) is read whole";
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
    Whole w = whole;
    if (w != null) {
      w.released.complete(false);
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
    Whole w = whole;
    if (w != null) {
      whole = null; // the tracker reads the table again whole, after a new reset
      w.released.complete(false);
    }
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
            role = c.getMetaData().getUserName();
            TableReader.prepareSession(c, reader.timeZone());
            try (Statement st = c.createStatement()) {
              st.execute("SET synchronous_commit = local");
              // a table locked by another session (ALTER TABLE, VACUUM FULL, LOCK TABLE) makes a
              // read wait; give up now and then to say so, and try again
              st.execute("SET lock_timeout = '" + READ_LOCK_TIMEOUT_MILLIS + "ms'");
            }
          }
          SnapshotTable table = table(c, task.range().table());
          if (table == null) {
            continue;
          }
          InitialSnapshot.awaitRoom(tracker, slot);
          boolean delivered =
              table.chunkKey().isEmpty() ? readWhole(c, task, table) : readChunk(c, task, table);
          if (delivered) {
            backoff = 50;
            lockWait = null;
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
          if (PgErrors.isPermanent(e)) {
            throw cannotRead(slot, task.range().table(), role, e);
          }
          if ("55P03".equals(e.getSQLState())) {
            lockWait =
                "a lock on "
                    + task.range().table()
                    + " that another session holds ("
                    + lockHolders(task.range().table())
                    + ")";
          }
          // described again before the retry: a table dropped meanwhile leaves the snapshot
          tables.remove(task.range().table());
          watermarks.close();
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
      watermarks.close();
    }
  }

  /** How long a snapshot read waits for a lock before it says so and tries again. */
  static final long READ_LOCK_TIMEOUT_MILLIS = 10_000;

  /** What the reader waits for when a table's lock is held by another session, or null. */
  private volatile String lockWait;

  /** The sessions holding a lock on {@code table}, as text; the reason if they cannot be read. */
  private String lockHolders(TableId table) {
    try (Connection c = connections.open()) {
      return SnapshotCatalog.lockHolders(c, table);
    } catch (SQLException e) {
      return "the holders cannot be read: " + e.getMessage();
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
    tables.put(id, table);
    tracker.estimate(id, table.reltuples()); // a table resumed after a restart counts here
    return table;
  }

  /**
   * Reads a table without a key whole at the exported snapshot of a temporary slot, its rows
   * released by the replication thread at the slot's consistent point after a reset ({@link
   * #gate}).
   *
   * <p>The slot's exported snapshot sees exactly the transactions whose commit record is before its
   * consistent point C (snapbuild.c; TemporarySlotFactsTest checks it on every version), and C is a
   * position of the same WAL as the stream's: the changes the stream delivers before C are in the
   * rows, those after C are not. C is at or after the WAL insert position read before the slot is
   * created, so the stream goes on up to that position while PostgreSQL creates the slot (it waits
   * for the transactions running then to end) and holds at the first event after it until C is
   * known. After creating the slot, a watermark of no chunk is written: an event after C, so that
   * an idle database's stream reaches C too. The slot lives until the snapshot is imported: one
   * replication slot and one walsender for that time.
   *
   * @return true if every row was released; false if it is to be read again (the stream's
   *     connection was lost, or the source stops)
   * @throws CdcConfigurationException if the server has no free replication slot or walsender
   */
  private boolean readWhole(Connection c, ReadTask task, SnapshotTable table)
      throws SQLException, InterruptedException {
    // on a standby its replay position: the slot's consistent point is at or after it too
    PgLsn below = ServerRole.visiblePosition(c);
    Whole w = new Whole(task, twoPhase ? PgLsn.ZERO : below, serverRole.standby());
    whole = w;
    long started = System.nanoTime();
    try {
      String name = "datum_cdc_" + nonce + "_" + (++serial);
      LOG.info(
          "slot {}: reading {} (no primary key or replica identity index) whole at the exported"
              + " snapshot of temporary slot {}; the stream holds at {} until it is created",
          slot,
          table.table(),
          name,
          below);
      try (Connection replication = connections.openReplication();
          Statement st = replication.createStatement();
          ResultSet rs =
              serverRole.creatingSlot(
                  name, replication, () -> closed, () -> st.executeQuery(createTemporary(name)))) {
        rs.next();
        PgLsn at = PgLsn.parse(rs.getString("consistent_point"));
        String snapshot = rs.getString("snapshot_name");
        emit(
            watermarks.on(c),
            false,
            ++serial); // a position after C: no pending chunk has this number
        c.setAutoCommit(false);
        try (Statement imp = c.createStatement()) {
          imp.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          imp.execute("SET TRANSACTION SNAPSHOT '" + snapshot.replace("'", "''") + "'");
          try (ResultSet current = imp.executeQuery("SELECT pg_current_snapshot()::text")) {
            current.next();
            w.snapshot = PgSnapshot.parse(current.getString(1));
          }
        }
        w.at = at;
        LOG.info(
            "slot {}: {} is read at {} (temporary slot created in {} ms)",
            slot,
            table.table(),
            at,
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
      } // closing the connection drops the temporary slot; the imported snapshot stays
      try {
        reader.readAll(c, table, chunkRows, chunkBytes, rows -> hand(w, rows));
      } catch (CancellationException e) {
        return false; // given up by the replication thread (its connection was lost) or closing
      }
      try {
        c.commit();
      } catch (SQLException e) {
        LOG.debug("slot {}: ending the read of {}: {}", slot, table.table(), e.toString());
      }
      chunksRead++;
      while (!closed) {
        try {
          return w.released.get(1, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          // the replication thread is releasing the last chunks
        } catch (java.util.concurrent.ExecutionException e) {
          return false;
        }
      }
      return false;
    } catch (SQLException e) {
      w.failed = true;
      String state = e.getSQLState() == null ? "" : e.getSQLState();
      if (state.equals("53400") || state.equals("53300")) {
        throw new CdcConfigurationException(
            "slot "
                + slot
                + ": cannot snapshot "
                + table.table()
                + ", which has no primary key or replica identity index: it is read at the"
                + " exported snapshot of a temporary replication slot, which needs one free"
                + (state.equals("53400")
                    ? " replication slot (max_replication_slots)"
                    : " walsender (max_wal_senders)")
                + " while it is created, and the server has none ("
                + e.getMessage()
                + " [SQLSTATE "
                + state
                + "]); raise "
                + (state.equals("53400") ? "max_replication_slots" : "max_wal_senders")
                + " (a server restart) or drop slots no longer used (SELECT slot_name FROM"
                + " pg_replication_slots WHERE NOT active)",
            e);
      }
      throw e;
    } catch (InterruptedException | RuntimeException e) {
      w.failed = true;
      throw e;
    } finally {
      if (!c.isClosed() && !c.getAutoCommit()) {
        try {
          c.rollback();
          c.setAutoCommit(true);
        } catch (SQLException e) {
          LOG.debug("slot {}: ending the read of {}: {}", slot, table.table(), e.toString());
        }
      }
    }
  }

  /**
   * The failure of a snapshot read that retrying cannot heal ({@link PgErrors#isPermanent}), naming
   * the table and the remedy: for a missing privilege the GRANT to run. The snapshot's progress
   * stays in the store: the source, started again once it is fixed, goes on from there.
   *
   * @param slot the slot
   * @param table the table being read
   * @param role the role the reading connection logged in as, or null if unknown
   * @param e the failure
   * @return the exception to throw
   */
  static CdcConfigurationException cannotRead(
      String slot, TableId table, String role, SQLException e) {
    String state = e.getSQLState();
    String remedy =
        "42501".equals(state)
            ? "; run GRANT SELECT ON "
                + PgErrors.quoteIdentifier(table.schema())
                + "."
                + PgErrors.quoteIdentifier(table.table())
                + " TO "
                + (role == null ? "<the source's role>" : PgErrors.quoteIdentifier(role))
            : "";
    return new CdcConfigurationException(
        "slot "
            + slot
            + ": cannot read "
            + table
            + " for its snapshot: "
            + e.getMessage()
            + " [SQLSTATE "
            + state
            + "]; retrying cannot fix this"
            + remedy
            + ", then start the source again: the snapshot goes on from the rows acknowledged",
        e);
  }

  /** Hands a chunk of a whole read to the replication thread, waiting for room. */
  private void hand(Whole w, ChunkRows rows) throws InterruptedException {
    while (!w.chunks.offer(rows, 100, TimeUnit.MILLISECONDS)) {
      if (closed || w.released.isDone()) {
        throw new CancellationException();
      }
    }
  }

  /** The temporary slot's command, as the server's version spells it (protocol docs, 53.4). */
  private String createTemporary(String name) {
    return "CREATE_REPLICATION_SLOT "
        + name
        + " TEMPORARY LOGICAL pgoutput"
        + (serverVersionNum >= 150000 ? " (SNAPSHOT 'export')" : " EXPORT_SNAPSHOT");
  }

  /** Reads one chunk between its watermarks; true if it was delivered. */
  private boolean readChunk(Connection c, ReadTask task, SnapshotTable table)
      throws SQLException, InterruptedException {
    long n = ++serial;
    Pending p = new Pending(n, task, table);
    pending.put(n, p);
    try {
      emit(watermarks.on(c), true, n);
      if (!watermarks.replayed(c, () -> closed)) {
        return false; // closing, or the standby was promoted: read again, on the new primary
      }
      // on a standby the snapshot lists no running xid: its replay position, read just before
      // and (in the snapshot's first statement) just after, tells what it sees instead
      boolean standby = serverRole.standby();
      PgLsn before = standby ? ServerRole.visiblePosition(c) : null;
      c.setAutoCommit(false);
      try (Statement st = c.createStatement()) {
        st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
        try (ResultSet rs =
            st.executeQuery(
                standby
                    ? "SELECT pg_current_snapshot()::text, pg_last_wal_replay_lsn()::text"
                    : "SELECT pg_current_snapshot()::text")) {
          rs.next();
          p.snapshot = PgSnapshot.parse(rs.getString(1));
          if (standby) {
            p.replayedBefore = before;
            p.replayedAfter = PgLsn.parse(rs.getString(2));
          }
        }
        p.rows =
            reader.read(
                c, table, task.after(), task.through(), chunkRows, chunkBytes, task.acknowledged());
        c.commit();
      } finally {
        c.setAutoCommit(true);
      }
      chunksRead++;
      emit(watermarks.on(c), false, n);
      while (!closed) {
        try {
          return p.verdict.get(1, TimeUnit.SECONDS);
        } catch (java.util.concurrent.TimeoutException e) {
          // the replication thread has not reached the high watermark yet
          if (standby && !serverRole.refresh(c)) {
            // promoted before it replayed the high watermark, which may then never come: read
            // the chunk again on the new primary (a high watermark that does come finds no chunk)
            return false;
          }
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
   * Holds the stream where a table without a key is read whole ({@link #readWhole}): events before
   * the insert position read before its temporary slot was created go on; from there the stream
   * holds until the slot's consistent point C is known; events before C go on; at the first event
   * at or after C, the reset and then every chunk of the table are released before it, the stream
   * holding while they are read. No change waits longer than the creation of the slot and the read
   * of that one table. If the read fails before its reset went out, the stream goes on as if it had
   * not begun; after, the chunks released stay to be acknowledged and the table is read again after
   * a new reset at a later position.
   *
   * @param event the next stream event
   * @param out receives the reset and the read rows, in order
   * @return true to hold the event (it is shown again); false to go on with it
   * @throws InterruptedException if interrupted while waiting briefly for the next chunk
   */
  public boolean gate(ChangeEvent event, Consumer<ChangeEvent> out) throws InterruptedException {
    Whole w = whole;
    if (w == null) {
      return false;
    }
    if (w.failed) {
      whole = null;
      if (w.resetReleased) {
        tracker.readAgain(w.task.range());
      }
      w.released.complete(false);
      return false;
    }
    PgLsn lsn = event.offset().commitLsn();
    PgLsn at = w.at;
    if (at == null ? lsn.isBefore(w.below) : !w.resetReleased && inSnapshot(event, lsn, w, at)) {
      return false;
    }
    // no chunk before the position is known: the event is shown again once it is
    ChunkRows rows = at == null ? null : w.chunks.poll(20, TimeUnit.MILLISECONDS);
    if (at == null) {
      LockSupport.parkNanos(this, TimeUnit.MILLISECONDS.toNanos(20));
    }
    if (rows == null) {
      long now = System.nanoTime();
      if (heldSinceNanos == 0) {
        heldSinceNanos = now;
      } else if (now - heldSinceNanos >= TimeUnit.SECONDS.toNanos(30)) {
        heldSinceNanos = now;
        LOG.warn(
            "slot {}: the stream holds at {} for the read of {} (no key): {}",
            slot,
            lsn,
            w.task.range().table(),
            at == null
                ? "PostgreSQL is creating its temporary slot, which waits for the transactions"
                    + " open when it began to end (pg_stat_activity: wait_event transactionid)"
                : "its rows are being read");
      }
      return true;
    }
    heldSinceNanos = 0;
    if (!w.resetReleased) {
      w.resetReleased = true;
      out.accept(
          ReadEvents.reset(
              tracker,
              slot,
              w.task.range(),
              at,
              Instant.now(),
              rows.rows().isEmpty() && rows.endsRange()));
    }
    ReadEvents.register(tracker, slot, w.task.range(), rows, at, Instant.now()).forEach(out);
    if (!rows.endsRange()) {
      return true;
    }
    whole = null;
    w.released.complete(true);
    return false;
  }

  /**
   * Whether an event goes before the reset: its commit is before the consistent point and the
   * imported snapshot sees its transaction. The second part matters for a transaction prepared
   * before C and committed after it (two_phase): it is delivered at Commit Prepared but its offset
   * carries the prepare record's position, and the rows read do not hold it, so it goes after them.
   */
  private static boolean inSnapshot(ChangeEvent event, PgLsn lsn, Whole w, PgLsn at) {
    long xid = event.transaction().xid();
    // on a standby, visibility follows the replay of commit records in WAL order: the exported
    // snapshot sees exactly the commits before its consistent point
    return lsn.isBefore(at) && (xid == 0 || w.standby || w.snapshot.sees(xid));
  }

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
      win.seen(xid, event.transaction().txEndLsn().asLong());
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
      request(
          parsed.id() != null ? parsed.id() : "request-" + m.offset().commitLsn(), parsed.tables());
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
    Visibility s = p.snapshot;
    if (s != null && p.replayedBefore != null) {
      s = Visibility.ofReplay(win, p.replayedBefore.asLong(), p.replayedAfter.asLong());
      if (s == null) {
        LOG.debug(
            "slot {}: chunk {} of {} read again: a change of the table was replayed on the"
                + " standby while its snapshot was taken ({} to {})",
            slot,
            p.serial,
            p.table.table(),
            p.replayedBefore,
            p.replayedAfter);
        return null;
      }
    }
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
