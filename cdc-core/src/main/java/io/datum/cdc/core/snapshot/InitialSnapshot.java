package io.datum.cdc.core.snapshot;

import io.datum.cdc.CdcException;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.delivery.PeerProducer.Delivery;
import io.datum.cdc.core.errors.PgErrors;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements;
import io.datum.cdc.core.feedback.SnapshotAcknowledgements.ReadTask;
import io.datum.cdc.event.ReadEvent;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The initial snapshot at the slot's exported snapshot: every published table read on {@code
 * parallelism} connections at once, each of which imported the snapshot ({@code BEGIN ISOLATION
 * LEVEL REPEATABLE READ READ ONLY; SET TRANSACTION SNAPSHOT 'name'}, PostgreSQL docs, SET
 * TRANSACTION, and 9.28.5 Snapshot Synchronization Functions), so every worker sees the database
 * exactly as of the slot's consistent point, and streaming from that point continues with no gap
 * and no overlap. The snapshot stays valid only while the replication connection that created the
 * slot sends nothing else (protocol docs, CREATE_REPLICATION_SLOT), so every worker imports it
 * before the caller continues.
 *
 * <p>Work is one task per key range: a large table is split into ranges at keys sampled from it, so
 * that several workers read it; each range is read in key order, in chunks of {@code chunkRows}
 * rows, each delivered as a unit. A table without a primary key or replica identity index is read
 * whole by one worker. Ranges a worker could not finish (its connection was lost) stay in the
 * tracker: the stream's online snapshot reads them.
 */
public final class InitialSnapshot {

  private static final Logger LOG = LoggerFactory.getLogger(InitialSnapshot.class);

  private final String slot;
  private final String publication;
  private final SnapshotAcknowledgements tracker;
  private final OnlineSnapshots.Connections connections;
  private final TableReader reader;
  private final int parallelism;
  private final int chunkRows;
  private final long chunkBytes;
  private final Object deliveryLock = new Object();

  /**
   * @param slot the slot
   * @param publication the publication whose tables are read
   * @param tracker the source's snapshot acknowledgements
   * @param connections opens the workers' connections
   * @param reader reads and decodes rows
   * @param parallelism workers
   * @param chunkRows rows per chunk
   * @param chunkBytes bytes of row text per chunk, at most
   */
  public InitialSnapshot(
      String slot,
      String publication,
      SnapshotAcknowledgements tracker,
      OnlineSnapshots.Connections connections,
      TableReader reader,
      int parallelism,
      int chunkRows,
      long chunkBytes) {
    this.slot = slot;
    this.publication = publication;
    this.tracker = tracker;
    this.connections = connections;
    this.reader = reader;
    this.parallelism = parallelism;
    this.chunkRows = chunkRows;
    this.chunkBytes = chunkBytes;
  }

  /**
   * Imports the exported snapshot on every worker, plans the tables, stores the plan, then reads
   * and delivers every row; returns once every chunk was delivered (not yet acknowledged).
   *
   * @param snapshotName the exported snapshot's name ({@code snapshot_name})
   * @param consistentPoint the slot's {@code consistent_point}
   * @param persistPlan stores the tracker's plan (called once, after the tables are known)
   * @param delivery where chunks go
   * @throws CdcException if a worker cannot import the snapshot, or reading fails other than by a
   *     lost connection
   * @throws InterruptedException if the source is stopping
   */
  public void run(
      String snapshotName, PgLsn consistentPoint, Runnable persistPlan, Delivery delivery)
      throws InterruptedException {
    List<Connection> workers = new ArrayList<>();
    try {
      try {
        for (int i = 0; i < parallelism; i++) {
          Connection c = connections.open();
          workers.add(c);
          TableReader.prepareSession(c, reader.timeZone());
          c.setAutoCommit(false);
          try (Statement st = c.createStatement()) {
            st.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
            st.execute("SET TRANSACTION SNAPSHOT '" + snapshotName.replace("'", "''") + "'");
          }
        }
      } catch (SQLException e) {
        throw new CdcException(
            "cannot import the exported snapshot "
                + snapshotName
                + " of slot "
                + slot
                + " for its initial snapshot: "
                + e.getMessage(),
            e);
      }
      Map<TableId, SnapshotTable> tables = new HashMap<>();
      try {
        for (SnapshotTable t : reader.publishedTables(workers.get(0), publication)) {
          tables.put(t.table(), t);
        }
        List<TableId> ids = new ArrayList<>(tables.keySet());
        ids.sort(Comparator.comparing(TableId::toString));
        tracker.startInitial(consistentPoint, ids);
        tables.values().forEach(t -> tracker.estimate(t.table(), t.reltuples()));
        persistPlan.run();
        LOG.info(
            "slot {}: initial snapshot of {} table(s) at {} on {} connection(s)",
            slot,
            ids.size(),
            consistentPoint,
            parallelism);
        split(workers.get(0), tables);
      } catch (SQLException e) {
        throw new CdcException(
            "cannot plan the initial snapshot of slot " + slot + ": " + e.getMessage(), e);
      }
      ConcurrentLinkedQueue<ReadTask> queue = new ConcurrentLinkedQueue<>(tracker.readTasks());
      AtomicReference<Throwable> failed = new AtomicReference<>();
      Handing handing = new Handing(delivery, workers.size());
      Thread handingThread = new Thread(handing, "datum-cdc-snapshot-" + slot + "-delivery");
      handingThread.setDaemon(true);
      handingThread.start();
      List<Thread> threads = new ArrayList<>();
      for (int i = 0; i < workers.size(); i++) {
        Connection c = workers.get(i);
        Thread t =
            new Thread(
                () -> work(c, queue, tables, consistentPoint, handing, failed),
                "datum-cdc-snapshot-" + slot + "-" + i);
        t.setDaemon(true);
        threads.add(t);
        t.start();
      }
      try {
        for (Thread t : threads) {
          t.join();
        }
        try {
          handing.close();
        } catch (InterruptedException e) {
          if (handing.failure == null) {
            throw e;
          }
          // the delivery failed and cannot take the end: its failure is thrown below
        }
        handingThread.join();
      } catch (InterruptedException e) {
        threads.forEach(Thread::interrupt);
        handingThread.interrupt();
        throw e;
      }
      if (handing.failure != null) {
        failed.compareAndSet(null, handing.failure);
      }
      Throwable t = failed.get();
      if (t instanceof InterruptedException ie) {
        throw ie;
      }
      if (t instanceof CdcException ce) {
        throw ce;
      }
      if (t instanceof RuntimeException re) {
        throw re;
      }
    } finally {
      for (Connection c : workers) {
        try {
          c.rollback();
          c.close();
        } catch (SQLException e) {
          LOG.debug("closing a snapshot worker connection: {}", e.toString());
        }
      }
    }
  }

  /** Splits the largest keyed tables into ranges so that every worker has work. */
  private void split(Connection c, Map<TableId, SnapshotTable> tables) throws SQLException {
    if (parallelism == 1) {
      return;
    }
    List<ReadTask> tasks = tracker.readTasks();
    tasks.sort(
        Comparator.comparingDouble((ReadTask t) -> -tables.get(t.range().table()).reltuples()));
    int count = tasks.size();
    for (ReadTask task : tasks) {
      SnapshotTable table = tables.get(task.range().table());
      double rows = table.reltuples();
      if (count >= 2 * parallelism || table.chunkKey().isEmpty() || rows < 4.0 * chunkRows) {
        continue;
      }
      int parts = (int) Math.min(4L * parallelism, Math.max(2, (long) (rows / chunkRows)));
      List<List<String>> bounds = reader.sampleBounds(c, table, parts);
      if (!bounds.isEmpty()) {
        tracker.split(task.range(), bounds);
        count += bounds.size();
      }
    }
  }

  /**
   * Waits, saying why every 30 s, while too many read rows are delivered and not acknowledged.
   *
   * @throws InterruptedException if the source is stopping
   */
  static void awaitRoom(SnapshotAcknowledgements tracker, String slot) throws InterruptedException {
    while (!tracker.awaitRoom(30_000)) {
      long[] u = tracker.unsettled();
      LOG.warn(
          "slot {}: the snapshot waits: {} read rows are delivered and not settled (the oldest"
              + " unacknowledged one is in chunk {}; the chunks after it cannot settle before it"
              + " is acknowledged); it goes on once the handler acknowledges them",
          slot,
          u[0],
          u[1]);
    }
  }

  /**
   * Hands the registered chunks to the delivery on a thread of its own, in the order they were
   * registered, so that a worker reads its next chunk while the handler takes its last one (else
   * reading and handling would take turns: a chunk is larger than the hand-off). At most one chunk
   * per worker waits. Every chunk put is delivered, also after a worker failed (its rows are
   * registered with the tracker and must reach the handler to settle), unless the delivery itself
   * fails or the source stops.
   */
  private static final class Handing implements Runnable {
    /** Put by {@link #close}, after the last chunk (compared by identity). */
    private static final List<ReadEvent> END = new ArrayList<>(0);

    private final Delivery delivery;
    private final ArrayBlockingQueue<List<ReadEvent>> chunks;
    private volatile Throwable failure;

    Handing(Delivery delivery, int capacity) {
      this.delivery = delivery;
      this.chunks = new ArrayBlockingQueue<>(capacity + 1); // + END
    }

    /**
     * Queues a registered chunk's events, waiting for room.
     *
     * @throws InterruptedException if interrupted, or if the delivery failed (the source stops)
     */
    void put(List<ReadEvent> events) throws InterruptedException {
      if (!events.isEmpty()) {
        offer(events);
      }
    }

    private void offer(List<ReadEvent> events) throws InterruptedException {
      while (!chunks.offer(events, 100, TimeUnit.MILLISECONDS)) {
        Throwable f = failure;
        if (f != null) {
          throw f instanceof InterruptedException ie
              ? ie
              : new InterruptedException("the snapshot's delivery failed: " + f);
        }
      }
    }

    /**
     * No chunk is put after this: the thread ends once the queued ones are delivered.
     *
     * @throws InterruptedException if interrupted, or if the delivery failed
     */
    void close() throws InterruptedException {
      offer(END);
    }

    @Override
    public void run() {
      try {
        for (List<ReadEvent> events = chunks.take(); events != END; events = chunks.take()) {
          delivery.deliver(events);
        }
      } catch (InterruptedException | RuntimeException e) {
        failure = e;
      }
    }
  }

  private void work(
      Connection c,
      ConcurrentLinkedQueue<ReadTask> queue,
      Map<TableId, SnapshotTable> tables,
      PgLsn consistentPoint,
      Handing delivery,
      AtomicReference<Throwable> failed) {
    TableId current = null;
    try {
      for (ReadTask next = queue.poll(); next != null; next = queue.poll()) {
        if (failed.get() != null) {
          return;
        }
        ReadTask task = next;
        current = task.range().table();
        SnapshotTable table = tables.get(task.range().table());
        if (table.chunkKey().isEmpty()) {
          // no key to page by: one COPY, cut into chunks as it streams
          reader.readAll(
              c,
              table,
              chunkRows,
              chunkBytes,
              rows -> {
                awaitRoom(tracker, slot);
                synchronized (deliveryLock) {
                  delivery.put(
                      ReadEvents.register(
                          tracker, slot, task.range(), rows, consistentPoint, Instant.now()));
                }
              });
          continue;
        }
        List<String> after = task.after();
        while (true) {
          awaitRoom(tracker, slot);
          ChunkRows rows =
              reader.read(
                  c, table, after, task.through(), chunkRows, chunkBytes, task.acknowledged());
          synchronized (deliveryLock) {
            List<ReadEvent> events =
                ReadEvents.register(
                    tracker, slot, task.range(), rows, consistentPoint, Instant.now());
            delivery.put(events);
          }
          if (rows.endsRange()) {
            break;
          }
          after = rows.readThrough();
        }
      }
    } catch (SQLException e) {
      if (PgErrors.isPermanent(e)) {
        String role = null;
        try {
          role = c.getMetaData().getUserName();
        } catch (SQLException unknown) {
          LOG.debug("slot {}: the reading role is unknown: {}", slot, unknown.toString());
        }
        failed.compareAndSet(null, OnlineSnapshots.cannotRead(slot, current, role, e));
        return;
      }
      // what was read stays delivered; the rest is read online once streaming
      LOG.warn(
          "slot {}: an initial snapshot worker lost its connection ({}); the ranges it did not"
              + " finish are read while streaming",
          slot,
          e.getMessage());
    } catch (InterruptedException e) {
      failed.compareAndSet(null, e);
    } catch (RuntimeException e) {
      failed.compareAndSet(null, e);
    }
  }
}
