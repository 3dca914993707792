package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.SnapshotProgress;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.RowChange;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Snapshots of tables without a primary key or replica identity index (an insert-only table with
 * the default replica identity, a REPLICA IDENTITY FULL table with duplicate rows, updates, deletes
 * and a TRUNCATE), read whole at a temporary slot's exported snapshot after a reset, while a writer
 * changes them: asked for while streaming, and an initial snapshot interrupted during their read
 * and during their reset, then resumed by a new source on the same store. Replaying the events in
 * order (a reset empties the table) leaves each table equal to the source's as a multiset of rows;
 * every change of a table delivered before its reset committed before the reset's position, every
 * later one at or after it. With no replication slot free, the snapshot fails the source at once,
 * naming max_replication_slots.
 */
@EmbeddedPostgresVersions({14, 15, 16, 17, 18})
@EmbeddedPostgresTest(settings = "max_prepared_transactions=10")
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class KeylessSnapshotTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final TableId LOG = new TableId("public", "nk_log");
  private static final TableId FULL = new TableId("public", "nk_full");
  private static final TableId KEYED = new TableId("public", "nk_keyed");

  private final EmbeddedPostgresServer pg;

  KeylessSnapshotTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private void createTables(String publication) throws Exception {
    pg.execute(
        "DROP TABLE IF EXISTS nk_log, nk_full, nk_keyed",
        "CREATE TABLE nk_log (at bigint, what text)",
        "CREATE TABLE nk_full (a int, b text)",
        "ALTER TABLE nk_full REPLICA IDENTITY FULL",
        "CREATE TABLE nk_keyed (id int PRIMARY KEY, v int)",
        "INSERT INTO nk_log SELECT g, 'boot' FROM generate_series(1, 4000) g",
        // duplicates: a multiset, not a set
        "INSERT INTO nk_full SELECT g % 300, 'b' || (g % 7) FROM generate_series(1, 3000) g",
        "INSERT INTO nk_keyed SELECT g, 0 FROM generate_series(1, 2000) g",
        "ANALYZE nk_log, nk_full, nk_keyed",
        "CREATE PUBLICATION " + publication + " FOR TABLE nk_log, nk_full, nk_keyed");
  }

  /** Inserts, updates, deletes and once truncates, one statement per transaction. */
  private static final class Writer implements Runnable {
    final EmbeddedPostgresServer pg;
    final AtomicBoolean stop = new AtomicBoolean();
    final AtomicInteger writes = new AtomicInteger();
    final AtomicReference<Throwable> failure = new AtomicReference<>();
    final boolean truncate;

    Writer(EmbeddedPostgresServer pg, boolean truncate) {
      this.pg = pg;
      this.truncate = truncate;
    }

    @Override
    public void run() {
      Random random = new Random(11);
      try (Connection c = pg.getConnection();
          Statement st = c.createStatement()) {
        for (int n = 0; !stop.get(); n++) {
          int a = random.nextInt(300);
          switch (random.nextInt(6)) {
            case 0, 1 -> st.execute("INSERT INTO nk_log VALUES (" + (100000 + n) + ", 'w')");
            case 2 -> st.execute("UPDATE nk_full SET b = b || '+' WHERE a = " + a);
            case 3 ->
                st.execute(
                    "DELETE FROM nk_full WHERE ctid IN"
                        + " (SELECT ctid FROM nk_full WHERE a = "
                        + a
                        + " LIMIT 1)");
            case 4 -> st.execute("INSERT INTO nk_full VALUES (" + a + ", 'dup')");
            default -> st.execute("UPDATE nk_keyed SET v = v + 1 WHERE id = " + (1 + a));
          }
          if (truncate && n == 400) {
            st.execute("TRUNCATE nk_full");
            st.execute(
                "INSERT INTO nk_full SELECT g % 300, 'again' FROM generate_series(1, 900) g");
          }
          writes.incrementAndGet();
        }
      } catch (Throwable t) {
        failure.set(t);
      }
    }

    void stopAndCheck(Thread thread) throws Throwable {
      stop.set(true);
      thread.join();
      if (failure.get() != null) {
        throw failure.get();
      }
    }
  }

  /** Replays into a replica and keeps every event, in order. */
  private static final class Recording implements CdcHandler {
    final SnapshotReplica replica =
        new SnapshotReplica().multiset(LOG).multiset(FULL).key(KEYED, "id");
    final List<ChangeEvent> events = new ArrayList<>();

    /** Acknowledges while true. */
    volatile java.util.function.Predicate<ChangeEvent> acknowledge = e -> true;

    @Override
    public synchronized void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
      replica.apply(event);
      events.add(event);
      if (acknowledge.test(event)) {
        checkpoints.acknowledge(event.offset());
      }
    }

    synchronized List<ChangeEvent> events() {
      return List.copyOf(events);
    }
  }

  private PgCdcSource.Builder source(String slot, MemoryCheckpointStore store) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(slot)
        .checkpointStore(store)
        .snapshotChunkRows(100);
  }

  /** Waits for a sentinel, then compares the replica with the tables. */
  private void assertReplicaEqualsTables(Recording recording) throws Exception {
    assertReplicaEqualsTables(recording, List.of(LOG, FULL, KEYED));
  }

  /** As above, for the tables that were snapshotted. */
  private void assertReplicaEqualsTables(Recording recording, List<TableId> tables)
      throws Exception {
    pg.execute("INSERT INTO nk_keyed VALUES (-1, -1)");
    await()
        .atMost(WAIT)
        .until(() -> recording.replica.table(KEYED).containsKey(List.<Object>of(-1)));
    try (Connection c = pg.getConnection()) {
      for (TableId t : List.of(LOG, FULL)) {
        if (tables.contains(t)) {
          assertSame(SnapshotReplica.multisetContent(c, t), recording.replica.multisetOf(t), t);
        }
      }
      if (tables.contains(KEYED)) {
        assertSame(
            SnapshotReplica.content(c, KEYED, List.of("id")),
            recording.replica.sorted(KEYED),
            KEYED);
      }
    }
  }

  /** Equal maps, or a short account of how they differ. */
  private static <K, V> void assertSame(Map<K, V> expected, Map<K, V> replayed, TableId table) {
    List<String> diff = new ArrayList<>();
    for (Map.Entry<K, V> e : expected.entrySet()) {
      if (!e.getValue().equals(replayed.get(e.getKey()))) {
        diff.add(e.getKey() + ": table " + e.getValue() + ", replayed " + replayed.get(e.getKey()));
      }
    }
    for (Map.Entry<K, V> e : replayed.entrySet()) {
      if (!expected.containsKey(e.getKey())) {
        diff.add(e.getKey() + ": not in the table, replayed " + e.getValue());
      }
    }
    assertEquals(
        List.of(),
        diff.subList(0, Math.min(5, diff.size())),
        table + ": " + diff.size() + " of " + expected.size() + " rows differ");
  }

  /**
   * Checks each reset's position against the stream around it, within one run: the changes of its
   * table delivered before it committed before its position, those after it at or after it, and its
   * rows follow it.
   */
  private static void assertResetsAtTheirPosition(List<ChangeEvent> run, TableId table) {
    int at = -1;
    for (int i = 0; i < run.size(); i++) {
      if (run.get(i) instanceof TruncateEvent t
          && t.isSnapshotReset()
          && t.tables().contains(table)) {
        at = i;
      }
    }
    assertTrue(at >= 0, "a reset of " + table);
    TruncateEvent reset = (TruncateEvent) run.get(at);
    PgLsn position = reset.snapshot().consistentWith();
    assertEquals(position, reset.offset().commitLsn());
    for (int i = 0; i < run.size(); i++) {
      ChangeEvent e = run.get(i);
      boolean ofTable =
          (e instanceof RowChange r && r.table().equals(table) && !(e instanceof ReadEvent))
              || (e instanceof TruncateEvent t
                  && !t.isSnapshotReset()
                  && t.tables().contains(table));
      if (!ofTable) {
        continue;
      }
      PgLsn commit = e.offset().commitLsn();
      if (i < at) {
        assertTrue(commit.isBefore(position), e + " before the reset at " + position);
      } else {
        assertFalse(commit.isBefore(position), e + " after the reset at " + position);
      }
    }
    // the rows read at the reset come right after it, in one run of read events
    int i = at + 1;
    while (i < run.size() && run.get(i) instanceof ReadEvent r && r.table().equals(table)) {
      assertEquals(position, r.snapshot().consistentWith());
      assertEquals(reset.snapshot().id(), r.snapshot().id());
      i++;
    }
    for (int j = i; j < run.size(); j++) {
      assertFalse(
          run.get(j) instanceof ReadEvent r
              && r.table().equals(table)
              && r.snapshot().id().equals(reset.snapshot().id()),
          "a read row of " + table + " after the reset's rows: " + run.get(j));
    }
  }

  @Test
  void requestedWhileStreamingUnderWritesReplaysToTheTablesAsMultisets() throws Throwable {
    createTables("nk_request");
    pg.execute("SELECT pg_create_logical_replication_slot('nk_request', 'pgoutput')");
    Recording recording = new Recording();
    Writer workload = new Writer(pg, true);
    Thread writer = new Thread(workload, "nk-writer");
    try (PgCdcSource s =
        source("nk_request", new MemoryCheckpointStore())
            .snapshot(SnapshotMode.ON_REQUEST)
            .build()) {
      CompletableFuture<Void> done = s.start(recording);
      writer.start();
      await().atMost(WAIT).until(() -> recording.replica.changes.get() > 200 || done.isDone());
      String id = s.snapshot(LOG, FULL, KEYED);
      assertTrue(id.startsWith("request-"), id);
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      int after = workload.writes.get() + 300;
      await().atMost(WAIT).until(() -> workload.writes.get() >= after || done.isDone());
      workload.stopAndCheck(writer);
      assertFalse(done.isDone(), "the source ended: " + done);
      assertReplicaEqualsTables(recording);
      // within one run, every update and delete after the reset finds its old row
      assertEquals(List.of(), recording.replica.missingBefore, "old rows the replica lacked");
      List<ChangeEvent> run = recording.events();
      assertResetsAtTheirPosition(run, LOG);
      assertResetsAtTheirPosition(run, FULL);
      assertEquals(2, recording.replica.resets.size(), "one reset per table");
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      workload.stop.set(true);
      writer.join();
      pg.execute("SELECT pg_drop_replication_slot('nk_request')");
    }
  }

  @Test
  void anInitialSnapshotInterruptedDuringTheReadAndDuringTheResetCompletesOnRestart()
      throws Throwable {
    createTables("nk_resume");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    Recording recording = new Recording();
    Writer workload = new Writer(pg, false);
    Thread writer = new Thread(workload, "nk-writer");
    try {
      // run 1: the exported snapshot; the handler acknowledges the first 150 read rows of the
      // keyless tables only, then the source stops (a crash as the store sees it)
      AtomicInteger keylessReads = new AtomicInteger();
      CountDownLatch enough = new CountDownLatch(1);
      recording.acknowledge =
          e -> {
            if (e instanceof ReadEvent r && !r.table().equals(KEYED)) {
              if (keylessReads.incrementAndGet() >= 150) {
                enough.countDown();
                return false;
              }
            }
            return true;
          };
      try (PgCdcSource s =
          source("nk_resume", store).createSlot(true).snapshot(SnapshotMode.INITIAL).build()) {
        s.start(recording);
        assertTrue(enough.await(60, TimeUnit.SECONDS));
        s.stop();
      }
      SnapshotProgress stored = store.load("nk_resume").orElseThrow().snapshot();
      assertFalse(stored.initialCompleted(), stored.toString());
      assertTrue(
          stored.tables().stream().anyMatch(t -> t.table().equals(LOG) || t.table().equals(FULL)),
          "a table without a key is left: " + stored);
      writer.start();

      // run 2: reads each keyless table again, whole, after a reset; the handler acknowledges
      // nothing from the first reset on, and the source stops once it was delivered
      CountDownLatch reset = new CountDownLatch(1);
      AtomicBoolean stopAcknowledging = new AtomicBoolean();
      recording.acknowledge =
          e -> {
            if (e instanceof TruncateEvent t && t.isSnapshotReset()) {
              stopAcknowledging.set(true);
              reset.countDown();
            }
            return !stopAcknowledging.get();
          };
      int resetsBefore = recording.replica.resets.size();
      try (PgCdcSource s = source("nk_resume", store).snapshot(SnapshotMode.INITIAL).build()) {
        s.start(recording);
        assertTrue(reset.await(60, TimeUnit.SECONDS));
        s.stop();
      }
      assertTrue(recording.replica.resets.size() > resetsBefore);
      assertFalse(store.load("nk_resume").orElseThrow().snapshot().initialCompleted());

      // run 3: acknowledges everything; the initial snapshot completes
      recording.acknowledge = e -> true;
      int from = recording.events().size();
      try (PgCdcSource s = source("nk_resume", store).snapshot(SnapshotMode.INITIAL).build()) {
        CompletableFuture<Void> done = s.start(recording);
        await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
        workload.stopAndCheck(writer);
        assertReplicaEqualsTables(recording);
        List<ChangeEvent> run = recording.events();
        run = run.subList(from, run.size());
        List<TableId> reset3 = new ArrayList<>();
        for (ChangeEvent e : run) {
          if (e instanceof TruncateEvent t && t.isSnapshotReset()) {
            reset3.addAll(t.tables());
            assertEquals("initial", t.snapshot().id());
          }
        }
        for (TableId t : reset3) {
          assertResetsAtTheirPosition(run, t);
        }
        assertFalse(reset3.isEmpty(), "run 3 read a keyless table again");
        await()
            .atMost(WAIT)
            .until(() -> store.load("nk_resume").orElseThrow().snapshot().initialCompleted());
        CdcCheckpoint end = store.load("nk_resume").orElseThrow();
        assertNull(end.snapshot().holdLsn());
        s.stop();
        done.get(30, TimeUnit.SECONDS);
      }
    } finally {
      workload.stop.set(true);
      if (writer.isAlive()) {
        writer.join();
      }
      pg.execute("SELECT pg_drop_replication_slot('nk_resume')");
    }
  }

  @Test
  void onAnIdleDatabaseTheResetAndRowsComeAndTheSnapshotEnds() throws Exception {
    createTables("nk_idle");
    pg.execute("SELECT pg_create_logical_replication_slot('nk_idle', 'pgoutput')");
    Recording recording = new Recording();
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    try (PgCdcSource s = source("nk_idle", store).snapshot(SnapshotMode.ON_REQUEST).build()) {
      CompletableFuture<Void> done = s.start(recording);
      s.snapshot(LOG);
      // nothing else is written: the reset's position is reached by datum-cdc's own message
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      assertFalse(done.isDone());
      assertEquals(4000, recording.replica.reads.get());
      assertEquals(List.of(LOG), recording.replica.resets.get(0).tables());
      ReadEvent last = (ReadEvent) recording.events().get(recording.events().size() - 1);
      assertTrue(last.snapshot().lastOfTable());
      await().atMost(WAIT).until(() -> store.load("nk_idle").orElseThrow().snapshot().isIdle());
      try (Connection c = pg.getConnection()) {
        assertEquals(SnapshotReplica.multisetContent(c, LOG), recording.replica.multisetOf(LOG));
      }
      assertEquals(
          "0",
          pg.queryString(
              "SELECT count(*)::text FROM pg_replication_slots WHERE slot_name LIKE 'datum_cdc_%'"),
          "the temporary slot is gone");
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('nk_idle')");
    }
  }

  @Test
  void aWalsenderTerminatedWhileTheRowsGoOutReadsTheTableAgainAfterANewReset() throws Throwable {
    createTables("nk_reconnect");
    pg.execute("SELECT pg_create_logical_replication_slot('nk_reconnect', 'pgoutput')");
    Recording recording = new Recording();
    CountDownLatch atReset = new CountDownLatch(1);
    CountDownLatch terminated = new CountDownLatch(1);
    AtomicInteger resetsSeen = new AtomicInteger();
    // the handler holds the first reset (unacknowledged) until the walsender was terminated, so
    // the stream stops, at the reset's position, with rows in the small hand-off
    recording.acknowledge =
        e -> {
          if (e instanceof TruncateEvent t
              && t.isSnapshotReset()
              && resetsSeen.incrementAndGet() == 1) {
            atReset.countDown();
            try {
              terminated.await();
            } catch (InterruptedException ie) {
              Thread.currentThread().interrupt();
            }
            return false;
          }
          return true;
        };
    Writer workload = new Writer(pg, false);
    Thread writer = new Thread(workload, "nk-writer");
    try (PgCdcSource s =
        source("nk_reconnect", new MemoryCheckpointStore())
            .snapshot(SnapshotMode.ON_REQUEST)
            .handoffCapacity(16)
            .build()) {
      CompletableFuture<Void> done = s.start(recording);
      writer.start();
      s.snapshot(LOG);
      assertTrue(atReset.await(60, TimeUnit.SECONDS));
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots"
              + " WHERE slot_name = 'nk_reconnect'");
      terminated.countDown();
      await().atMost(WAIT).until(() -> resetsSeen.get() >= 2 || done.isDone());
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      workload.stopAndCheck(writer);
      assertFalse(done.isDone(), "the source ended: " + done);
      assertReplicaEqualsTables(recording, List.of(LOG));
      assertTrue(resetsSeen.get() >= 2, "read again after a new reset: " + resetsSeen);
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      terminated.countDown();
      workload.stop.set(true);
      writer.join();
      pg.execute("SELECT pg_drop_replication_slot('nk_reconnect')");
    }
  }

  @Test
  void withTwoPhasePreparedTransactionsAcrossTheResetReplayToTheTable() throws Throwable {
    org.junit.jupiter.api.Assumptions.assumeTrue(pg.majorVersion() >= 15, "two_phase: 15+");
    createTables("nk_twophase");
    Recording recording = new Recording();
    AtomicBoolean stop = new AtomicBoolean();
    AtomicInteger prepared = new AtomicInteger();
    AtomicReference<Throwable> failure = new AtomicReference<>();
    // transactions prepared, then committed (one in five rolled back) three transactions later:
    // some are prepared before a reset's position and committed after it
    Thread writer =
        new Thread(
            () -> {
              java.util.ArrayDeque<String> open = new java.util.ArrayDeque<>();
              try (Connection c = pg.getConnection();
                  Statement st = c.createStatement()) {
                for (int n = 0; !stop.get() || !open.isEmpty(); n++) {
                  if (!stop.get()) {
                    st.execute("BEGIN");
                    st.execute("INSERT INTO nk_log VALUES (" + (200000 + n) + ", '2pc')");
                    st.execute("PREPARE TRANSACTION 'nk_" + n + "'");
                    open.addLast("nk_" + n);
                    prepared.incrementAndGet();
                  }
                  if (open.size() > 3 || stop.get()) {
                    String gid = open.removeFirst();
                    st.execute(
                        (n % 5 == 0 ? "ROLLBACK PREPARED '" : "COMMIT PREPARED '") + gid + "'");
                  }
                }
              } catch (Throwable t) {
                failure.set(t);
              }
            },
            "nk-2pc-writer");
    try (PgCdcSource s =
        source("nk_twophase", new MemoryCheckpointStore())
            .createSlot(true)
            .twoPhase(true)
            .snapshot(SnapshotMode.ON_REQUEST)
            .build()) {
      CompletableFuture<Void> done = s.start(recording);
      writer.start();
      for (int round = 0; round < 3; round++) {
        int before = prepared.get() + 100;
        await().atMost(WAIT).until(() -> prepared.get() >= before || done.isDone());
        s.snapshot(LOG);
        await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      }
      stop.set(true);
      writer.join();
      if (failure.get() != null) {
        throw failure.get();
      }
      assertFalse(done.isDone(), "the source ended: " + done);
      assertReplicaEqualsTables(recording, List.of(LOG));
      assertEquals(3, recording.replica.resets.size());
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      if (writer.isAlive()) {
        writer.join();
      }
      pg.execute("SELECT pg_drop_replication_slot('nk_twophase')");
    }
  }

  @Test
  void aTableRenamedBeforeItIsReadLeavesTheSnapshotAndTheStreamGoesOn() throws Exception {
    createTables("nk_renamed");
    pg.execute("SELECT pg_create_logical_replication_slot('nk_renamed', 'pgoutput')");
    Recording recording = new Recording();
    try (PgCdcSource s =
            source("nk_renamed", new MemoryCheckpointStore())
                .snapshot(SnapshotMode.ON_REQUEST)
                .build();
        Connection locker = pg.getConnection();
        Statement st = locker.createStatement()) {
      CompletableFuture<Void> done = s.start(recording);
      // renamed after the request, before its read (a trial found it retried for ever): an
      // open transaction with an xid holds the temporary slot's creation until the rename commits
      locker.setAutoCommit(false);
      st.execute("INSERT INTO nk_keyed VALUES (-3, -3)");
      s.snapshot(LOG);
      // the table was described; its temporary slot's creation waits for this transaction
      await()
          .atMost(WAIT)
          .until(
              () ->
                  pg.queryString(
                          "SELECT count(*)::text FROM pg_stat_activity WHERE application_name ="
                              + " 'datum-cdc snapshot slot nk_renamed' AND wait_event ="
                              + " 'transactionid'")
                      .equals("1"));
      st.execute("ALTER TABLE nk_log RENAME TO nk_log_renamed");
      locker.commit();
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      assertFalse(done.isDone(), "the source ended: " + done);
      pg.execute("INSERT INTO nk_keyed VALUES (-2, -2)");
      await()
          .atMost(WAIT)
          .until(() -> recording.replica.table(KEYED).containsKey(List.<Object>of(-2)));
      assertEquals(0, recording.replica.reads.get());
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute(
          "ALTER TABLE IF EXISTS nk_log_renamed RENAME TO nk_log",
          "SELECT pg_drop_replication_slot('nk_renamed')");
    }
  }

  @Test
  void withNoReplicationSlotFreeTheSnapshotFailsNamingTheSetting() throws Exception {
    createTables("nk_full_slots");
    pg.execute("SELECT pg_create_logical_replication_slot('nk_full_slots', 'pgoutput')");
    int max = Integer.parseInt(pg.queryString("SHOW max_replication_slots"));
    int used = Integer.parseInt(pg.queryString("SELECT count(*)::text FROM pg_replication_slots"));
    List<String> fillers = new ArrayList<>();
    try {
      for (int i = used; i < max; i++) {
        String name = "nk_fill_" + i;
        pg.execute("SELECT pg_create_physical_replication_slot('" + name + "')");
        fillers.add(name);
      }
      Recording recording = new Recording();
      try (PgCdcSource s =
          source("nk_full_slots", new MemoryCheckpointStore())
              .snapshot(SnapshotMode.ON_REQUEST)
              .build()) {
        CompletableFuture<Void> done = s.start(recording);
        s.snapshot(LOG);
        ExecutionException failed =
            org.junit.jupiter.api.Assertions.assertThrows(
                ExecutionException.class, () -> done.get(60, TimeUnit.SECONDS));
        CdcConfigurationException cause =
            assertInstanceOf(CdcConfigurationException.class, failed.getCause());
        assertTrue(
            cause.getMessage().contains("max_replication_slots")
                && cause.getMessage().contains("public.nk_log"),
            cause.getMessage());
        assertTrue(recording.replica.resets.isEmpty(), "no reset went out");
      }
    } finally {
      for (String name : fillers) {
        pg.execute("SELECT pg_drop_replication_slot('" + name + "')");
      }
      pg.execute("SELECT pg_drop_replication_slot('nk_full_slots')");
    }
  }
}
