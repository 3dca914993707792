package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A source pointed at a hot standby (PostgreSQL 16+): it creates its slot there (asking the primary
 * for a running-transactions record), takes the initial snapshot at the standby's exported
 * snapshot, runs online snapshots with their watermarks written on the primary, and streams; it
 * writes nothing on the standby (whose log shows no refused statement). Without the primary's URL,
 * what would write is refused at start, naming the option. One primary/standby pair per test and
 * version.
 */
@EmbeddedPostgresVersions({16, 17, 18})
@EmbeddedPostgresTest
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class StandbySourceTest {

  private static final Duration WAIT = Duration.ofSeconds(90);

  private final EmbeddedPostgresServer primary;

  StandbySourceTest(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  @Test
  void snapshotsAndStreamsFromTheStandbyWritingOnlyOnThePrimary() throws Exception {
    TableId items = new TableId("public", "sb_items");
    TableId notes = new TableId("public", "sb_notes");
    primary.execute(
        "CREATE TABLE sb_items (id int PRIMARY KEY, hot int, body text)",
        "CREATE TABLE sb_notes (v int)",
        "ALTER TABLE sb_notes REPLICA IDENTITY FULL",
        "INSERT INTO sb_items SELECT g, 0, repeat(md5(g::text), 3) FROM generate_series(1, 600) g",
        "INSERT INTO sb_notes SELECT g % 7 FROM generate_series(1, 40) g");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_stream")) {
      long logStart = Files.size(standby.logFile());
      SnapshotReplica replica = new SnapshotReplica().key(items, "id").multiset(notes);
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> writerFailure = new AtomicReference<>();
      Thread writer = writer(stop, writerFailure);
      Thread longer = longerTransactions(stop, writerFailure);
      try (PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(standby.jdbcUrl())
              .primaryJdbcUrl(primary.jdbcUrl())
              .user(primary.user())
              .slot("sb_slot")
              .publication("sb_pub")
              .createPublication(true, "sb_items", "sb_notes")
              .createSlot(true)
              .checkpointStore(new MemoryCheckpointStore())
              .snapshot(SnapshotMode.INITIAL, SnapshotMode.ON_REQUEST)
              .snapshotChunkRows(50)
              .build()) {
        StaleReads stale = new StaleReads(items, replica);
        CompletableFuture<Void> done = source.start(stale);
        writer.start();
        longer.start();
        await().atMost(WAIT).until(() -> !source.snapshotInProgress() || done.isDone());
        assertFalse(done.isDone(), "the source ended during the initial snapshot");
        // online snapshots: chunks between watermarks written on the primary, and the table
        // without a key read at a temporary slot's exported snapshot on the standby
        source.snapshot(items);
        source.snapshot(notes);
        await().atMost(WAIT).until(() -> !source.snapshotInProgress() || done.isDone());
        stop.set(true);
        writer.join();
        longer.join();
        assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
        primary.execute("INSERT INTO sb_items VALUES (-1, -1, 'sentinel')");
        await()
            .atMost(WAIT)
            .until(() -> replica.table(items).containsKey(List.<Object>of(-1)) || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        try (Connection c = primary.getConnection()) {
          assertEquals(SnapshotReplica.content(c, items, List.of("id")), replica.sorted(items));
          assertEquals(SnapshotReplica.multisetContent(c, notes), replica.multisetOf(notes));
        }
        assertTrue(replica.changes.get() > 50, "changes during the snapshots: " + replica.changes);
        assertEquals(List.of(), stale.found, "read rows older than a change delivered before them");
        assertTrue(source.metrics().snapshotRowsRead() >= 2 * 600 + 2 * 40);

        SlotStatus status = source.readSlotStatus();
        assertTrue(status.standby(), status.toString());
        assertNull(status.invalidationReason(), status.toString());
        assertNotNull(status.standbyReplayLagBytes(), status.toString());
        source.stop();
        done.get(30, TimeUnit.SECONDS);
      } finally {
        stop.set(true);
      }
      assertEquals(
          "t",
          primary.queryString("SELECT count(*) = 1 FROM pg_publication WHERE pubname = 'sb_pub'"));
      assertEquals(
          "logical",
          standby.queryString(
              "SELECT slot_type FROM pg_replication_slots WHERE slot_name = 'sb_slot'"));
      assertEquals(
          "0",
          primary.queryString(
              "SELECT count(*) FROM pg_replication_slots WHERE slot_type = 'logical'"),
          "no logical slot on the primary, not even a temporary one left over");
      String log = Files.readString(standby.logFile()).substring((int) logStart);
      assertFalse(
          log.contains("read-only transaction") || log.contains("recovery is in progress"),
          "a statement that writes reached the standby:\n" + log);
    }
  }

  @Test
  void withoutThePrimaryWhatWritesIsRefusedAtStartAndStreamingWorks(@TempDir Path dir)
      throws Exception {
    primary.execute(
        "CREATE TABLE sb_plain (id int PRIMARY KEY)",
        "CREATE PUBLICATION sb_plain FOR TABLE sb_plain");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_refuse")) {
      CdcConfigurationException snapshot =
          assertThrows(
              CdcConfigurationException.class,
              () -> start(standby, dir, b -> b.snapshot(SnapshotMode.INITIAL)));
      assertTrue(snapshot.getMessage().contains("snapshot mode initial"), snapshot.getMessage());
      assertTrue(snapshot.getMessage().contains("primary-jdbc-url"), snapshot.getMessage());
      assertTrue(snapshot.getMessage().contains("hot standby"), snapshot.getMessage());

      CdcConfigurationException publication =
          assertThrows(
              CdcConfigurationException.class,
              () ->
                  start(
                      standby,
                      dir,
                      b -> b.publication("sb_missing").createPublication(true, "sb_plain")));
      assertTrue(
          publication.getMessage().contains("creating publication \"sb_missing\""),
          publication.getMessage());
      assertTrue(publication.getMessage().contains("primary-jdbc-url"), publication.getMessage());
      if (primary.majorVersion() >= 17) {
        CdcConfigurationException failover =
            assertThrows(
                CdcConfigurationException.class,
                () -> start(standby, dir, b -> b.failoverSlot(true)));
        assertTrue(failover.getMessage().contains("hot standby"), failover.getMessage());
      }
      assertEquals("0", standby.queryString("SELECT count(*) FROM pg_replication_slots"));
      assertEquals(
          "0",
          primary.queryString("SELECT count(*) FROM pg_publication WHERE pubname = 'sb_missing'"));

      // stopped while it waits to create its slot (no primary to hurry it): the creation is
      // cancelled, and no slot appears later, when the primary logs its running transactions
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource waiting =
              PgCdcSource.builder()
                  .jdbcUrl(standby.jdbcUrl())
                  .user(primary.user())
                  .slot("sb_cancelled")
                  .publication("sb_plain")
                  .createSlot(true)
                  .checkpointStore(store)
                  .build()) {
        CompletableFuture<Void> starting =
            CompletableFuture.runAsync(() -> waiting.start(new EventCollector(true)));
        await()
            .atMost(WAIT)
            .until(
                () ->
                    "1"
                        .equals(
                            standby.queryString(
                                "SELECT count(*) FROM pg_replication_slots"
                                    + " WHERE slot_name = 'sb_cancelled'")));
        waiting.stop();
        java.util.concurrent.ExecutionException stopped =
            assertThrows(
                java.util.concurrent.ExecutionException.class,
                () -> starting.get(WAIT.toSeconds(), TimeUnit.SECONDS));
        assertTrue(
            stopped.getCause().getMessage().contains("the creation was cancelled"),
            stopped.getCause().toString());
      }
      primary.execute("SELECT pg_log_standby_snapshot()", "SELECT pg_log_standby_snapshot()");
      standby.awaitReplay(WAIT);
      assertEquals(
          "0",
          standby.queryString(
              "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'sb_cancelled'"),
          "no slot left by the cancelled creation");

      // streaming alone writes nothing: it works, once the primary logs its running transactions
      EventCollector events = new EventCollector(true);
      try (FileCheckpointStore store = FileCheckpointStore.open(dir);
          PgCdcSource source =
              PgCdcSource.builder()
                  .jdbcUrl(standby.jdbcUrl())
                  .user(primary.user())
                  .slot("sb_plain_slot")
                  .publication("sb_plain")
                  .createSlot(true)
                  .checkpointStore(store)
                  .build()) {
        CompletableFuture<PgCdcSource> started =
            CompletableFuture.supplyAsync(
                () -> {
                  source.start(events);
                  return source;
                });
        // what an operator does when told so: the slot's creation waits for this record
        await()
            .atMost(WAIT)
            .until(
                () -> {
                  primary.execute("SELECT pg_log_standby_snapshot()");
                  return started.isDone();
                });
        started.get();
        primary.execute("INSERT INTO sb_plain VALUES (1)", "INSERT INTO sb_plain VALUES (2)");
        assertEquals(2, events.take(2, WAIT).size());
        await().atMost(WAIT).until(() -> !source.watermark().isZero());
        // a quiet slot moves: changes of a table the publication leaves out move the standby's
        // WAL on, and the slot's confirmed_flush_lsn follows (keepalives carry the position)
        primary.execute(
            "CREATE TABLE sb_unpublished (id int)",
            "INSERT INTO sb_unpublished SELECT generate_series(1, 1000)");
        String written = primary.queryString("SELECT pg_current_wal_flush_lsn()");
        await()
            .atMost(WAIT)
            .until(
                () ->
                    "t"
                        .equals(
                            standby.queryString(
                                "SELECT confirmed_flush_lsn >= '"
                                    + written
                                    + "'::pg_lsn FROM pg_replication_slots"
                                    + " WHERE slot_name = 'sb_plain_slot'")));
      }
    }
  }

  /**
   * An initial snapshot taken on the standby and stopped part way goes on online after a restart
   * with the same store, its watermarks written on the primary, under writes: the rows the first
   * run acknowledged are not read again, no read row is older than a change delivered before it,
   * and the replica equals the table.
   */
  @Test
  void anInterruptedInitialSnapshotResumesOnlineFromTheStandby() throws Exception {
    TableId table = new TableId("public", "sb_resume");
    primary.execute(
        "CREATE TABLE sb_resume (id int PRIMARY KEY, hot int)",
        "INSERT INTO sb_resume SELECT g, 0 FROM generate_series(1, 3000) g",
        "CREATE PUBLICATION sb_resume FOR TABLE sb_resume");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_resume")) {
      MemoryCheckpointStore store = new MemoryCheckpointStore();
      java.util.Set<Object> acknowledged = java.util.concurrent.ConcurrentHashMap.newKeySet();
      java.util.concurrent.CountDownLatch enough = new java.util.concurrent.CountDownLatch(1);
      java.util.concurrent.atomic.AtomicInteger seen =
          new java.util.concurrent.atomic.AtomicInteger();
      try (PgCdcSource first = resumable(standby, store).createSlot(true).build()) {
        first.start(
            (event, checkpoints) -> {
              int n = seen.incrementAndGet();
              if (n <= 1000) {
                checkpoints.acknowledge(event.offset());
                acknowledged.add(((io.datum.cdc.event.ReadEvent) event).after().get("id"));
              }
              if (n == 1500) {
                enough.countDown();
              }
            });
        assertTrue(enough.await(WAIT.toSeconds(), TimeUnit.SECONDS), "1500 rows read");
        first.stop();
      }
      assertEquals(1000, acknowledged.size());
      SnapshotReplica replica = new SnapshotReplica().key(table, "id");
      for (Object id : acknowledged) {
        replica.table(table).put(List.of(id), java.util.Map.of("id", id, "hot", 0));
      }
      StaleReads stale = new StaleReads(table, replica);
      java.util.List<Object> readAgain = new java.util.concurrent.CopyOnWriteArrayList<>();
      AtomicBoolean stop = new AtomicBoolean();
      AtomicReference<Throwable> writerFailure = new AtomicReference<>();
      Thread writer =
          new Thread(
              () -> {
                Random random = new Random(17);
                try (Connection c = primary.getConnection();
                    Statement st = c.createStatement()) {
                  for (int n = 0; !stop.get() && n < 20_000; n++) {
                    st.execute(
                        "UPDATE sb_resume SET hot = hot + 1 WHERE id = "
                            + (1 + random.nextInt(3000)));
                  }
                } catch (Throwable e) {
                  writerFailure.set(e);
                }
              },
              "standby-resume-writer");
      writer.setDaemon(true);
      try (PgCdcSource second = resumable(standby, store).build()) {
        CompletableFuture<Void> done =
            second.start(
                (event, checkpoints) -> {
                  if (event instanceof io.datum.cdc.event.ReadEvent r
                      && acknowledged.contains(r.after().get("id"))) {
                    readAgain.add(r.after().get("id"));
                  }
                  stale.handle(event, checkpoints);
                });
        writer.start();
        await().atMost(WAIT).until(() -> !second.snapshotInProgress() || done.isDone());
        stop.set(true);
        writer.join();
        assertNull(writerFailure.get(), () -> "the writer failed: " + writerFailure.get());
        primary.execute("INSERT INTO sb_resume VALUES (-1, -1)");
        await()
            .atMost(WAIT)
            .until(() -> replica.table(table).containsKey(List.<Object>of(-1)) || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        assertEquals(List.of(), readAgain, "rows acknowledged in the first run, read again");
        assertEquals(List.of(), stale.found, "read rows older than a change delivered before");
        try (Connection c = primary.getConnection()) {
          assertEquals(SnapshotReplica.content(c, table, List.of("id")), replica.sorted(table));
        }
      } finally {
        stop.set(true);
      }
    }
  }

  /** A source on the standby with an initial snapshot in chunks of 100 rows. */
  private PgCdcSource.Builder resumable(
      EmbeddedPostgresServer standby, MemoryCheckpointStore store) {
    return PgCdcSource.builder()
        .jdbcUrl(standby.jdbcUrl())
        .primaryJdbcUrl(primary.jdbcUrl())
        .user(primary.user())
        .slot("sb_resume_slot")
        .publication("sb_resume")
        .checkpointStore(store)
        .snapshot(SnapshotMode.INITIAL)
        .snapshotChunkRows(100);
  }

  /**
   * With the standby's replay paused (replication from the primary stopped for a while), a chunk
   * requested waits until the standby has replayed its low watermark, and says so; the slot's
   * status reports the standby's replay lag. Read earlier, the chunk would miss the updates before
   * the watermark and arrive after them, older than the replica.
   */
  @Test
  void aChunkIsReadOnlyOnceTheStandbyReplayedItsLowWatermark() throws Exception {
    TableId paused = new TableId("public", "sb_paused");
    primary.execute(
        "CREATE TABLE sb_paused (id int PRIMARY KEY, v int)",
        "INSERT INTO sb_paused SELECT g, 0 FROM generate_series(1, 200) g",
        "CREATE PUBLICATION sb_paused FOR TABLE sb_paused");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_pause")) {
      SnapshotReplica replica = new SnapshotReplica().key(paused, "id");
      try (PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(standby.jdbcUrl())
              .primaryJdbcUrl(primary.jdbcUrl())
              .user(primary.user())
              .slot("sb_paused_slot")
              .publication("sb_paused")
              .createSlot(true)
              .checkpointStore(new MemoryCheckpointStore())
              .snapshot(SnapshotMode.ON_REQUEST)
              .snapshotChunkRows(1000)
              .build()) {
        CompletableFuture<Void> done = source.start(replica);
        standby.execute("SELECT pg_wal_replay_pause()");
        primary.execute("UPDATE sb_paused SET v = v + 1");
        source.snapshot(paused);
        await()
            .atMost(WAIT)
            .until(
                () -> {
                  String waiting = source.metrics().snapshotWaiting();
                  return waiting != null
                      && waiting.startsWith("the standby to replay the primary's WAL up to");
                });
        SlotStatus status = source.readSlotStatus();
        assertTrue(
            status.standbyReplayLagBytes() != null && status.standbyReplayLagBytes() > 0,
            status.toString());
        assertEquals(0, replica.reads.get(), "no row read before the standby replayed");
        standby.execute("SELECT pg_wal_replay_resume()");
        await().atMost(WAIT).until(() -> !source.snapshotInProgress() || done.isDone());
        primary.execute("INSERT INTO sb_paused VALUES (-1, -1)");
        await()
            .atMost(WAIT)
            .until(() -> replica.table(paused).containsKey(List.<Object>of(-1)) || done.isDone());
        assertFalse(done.isDone(), "the source ended: " + done);
        try (Connection c = primary.getConnection()) {
          assertEquals(SnapshotReplica.content(c, paused, List.of("id")), replica.sorted(paused));
        }
        assertEquals(200, replica.reads.get());
        assertNull(source.metrics().snapshotWaiting());
      }
    }
  }

  /**
   * Checks, before the replica applies it, that no read row of the keyed table is older than a
   * change of its key delivered before it: {@code hot} only grows while a row lives (the writer
   * increments it, a re-insert starts it at -1 after a delete).
   */
  private static final class StaleReads implements io.datum.cdc.event.CdcHandler {
    final List<String> found = new java.util.ArrayList<>();
    private final TableId table;
    private final SnapshotReplica replica;
    private final java.util.Map<Object, Integer> lastHot = new java.util.HashMap<>();

    StaleReads(TableId table, SnapshotReplica replica) {
      this.table = table;
      this.replica = replica;
    }

    @Override
    public synchronized void handle(
        io.datum.cdc.event.ChangeEvent event, io.datum.cdc.CdcCheckpointHandle checkpoints) {
      if (event instanceof io.datum.cdc.event.ReadEvent) {
        checkRead((io.datum.cdc.event.ReadEvent) event);
      } else if (event instanceof io.datum.cdc.event.RowChange change
          && change.table().equals(table)) {
        if (event instanceof io.datum.cdc.event.DeleteEvent d) {
          lastHot.remove(d.before().get("id"));
        } else {
          io.datum.cdc.event.Row after =
              event instanceof io.datum.cdc.event.InsertEvent i
                  ? i.after()
                  : ((io.datum.cdc.event.UpdateEvent) event).after();
          lastHot.put(after.get("id"), (Integer) after.get("hot"));
        }
      }
      replica.handle(event, checkpoints);
    }

    private void checkRead(io.datum.cdc.event.ReadEvent r) {
      if (!r.table().equals(table)) {
        return;
      }
      Integer last = lastHot.get(r.after().get("id"));
      int hot = (Integer) r.after().get("hot");
      if (last != null && hot < last && hot != -1) {
        found.add("id " + r.after().get("id") + " read with hot " + hot + " after " + last);
      }
    }
  }

  /**
   * A slot's creation on the standby waits for a transaction open on the primary: past the slot
   * creation timeout the start fails naming that transaction, as read on the primary.
   */
  @Test
  void aSlotCreationTimeoutOnTheStandbyNamesThePrimarysOpenTransaction() throws Exception {
    primary.execute(
        "CREATE TABLE sb_open (id int PRIMARY KEY)",
        "CREATE PUBLICATION sb_open FOR TABLE sb_open");
    try (EmbeddedPostgresServer standby = primary.createStandby("sb_open");
        Connection open = primary.getConnection()) {
      open.setAutoCommit(false);
      try (Statement st = open.createStatement()) {
        st.execute("INSERT INTO sb_open VALUES (1)"); // holds an xid until rolled back
      }
      standby.awaitReplay(WAIT);
      try (PgCdcSource source =
          PgCdcSource.builder()
              .jdbcUrl(standby.jdbcUrl())
              .primaryJdbcUrl(primary.jdbcUrl())
              .user(primary.user())
              .slot("sb_open_slot")
              .publication("sb_open")
              .createSlot(true)
              .slotCreationTimeout(Duration.ofSeconds(3))
              .checkpointStore(new MemoryCheckpointStore())
              .build()) {
        io.datum.cdc.CdcReplicationException e =
            assertThrows(
                io.datum.cdc.CdcReplicationException.class,
                () -> source.start(new EventCollector(true)));
        assertTrue(e.getMessage().contains("on the primary"), e.getMessage());
        assertTrue(e.getMessage().contains("INSERT INTO sb_open"), e.getMessage());
      } finally {
        open.rollback();
      }
    }
  }

  /** Starts a source on the standby without the primary's URL, with one more setting. */
  private void start(
      EmbeddedPostgresServer standby,
      Path dir,
      java.util.function.UnaryOperator<PgCdcSource.Builder> more)
      throws Exception {
    try (FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source =
            more.apply(
                    PgCdcSource.builder()
                        .jdbcUrl(standby.jdbcUrl())
                        .user(primary.user())
                        .slot("sb_refused")
                        .publication("sb_plain")
                        .createSlot(true)
                        .checkpointStore(store))
                .build()) {
      source.start(new EventCollector(true));
    }
  }

  /**
   * Updates three hot rows per transaction, a statement per round trip, beside {@link #writer}: a
   * transaction running while the writer's later ones commit, so that a chunk's snapshot can miss
   * an xid below its xmax (on a standby, {@code pg_current_snapshot()} lists no such xid).
   */
  private Thread longerTransactions(AtomicBoolean stop, AtomicReference<Throwable> failure) {
    Thread t =
        new Thread(
            () -> {
              Random random = new Random(13);
              try (Connection c = primary.getConnection();
                  Statement st = c.createStatement()) {
                c.setAutoCommit(false);
                for (int n = 0; !stop.get() && n < 5_000; n++) {
                  int first = 1 + random.nextInt(28);
                  for (int id = first; id < first + 3; id++) {
                    st.execute("UPDATE sb_items SET hot = hot + 1 WHERE id = " + id);
                  }
                  c.commit();
                }
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "standby-test-longer-transactions");
    t.setDaemon(true);
    return t;
  }

  /**
   * Updates hot rows, deletes and re-inserts rows, and inserts and deletes keyless rows on the
   * primary, until stopped or 20,000 rounds.
   */
  private Thread writer(AtomicBoolean stop, AtomicReference<Throwable> failure) {
    Thread t =
        new Thread(
            () -> {
              Random random = new Random(11);
              try (Connection c = primary.getConnection();
                  Statement st = c.createStatement()) {
                for (int n = 0; !stop.get() && n < 20_000; n++) {
                  st.execute(
                      "UPDATE sb_items SET hot = hot + 1 WHERE id = " + (1 + random.nextInt(30)));
                  if (n % 5 == 0) {
                    int id = 1 + random.nextInt(600);
                    st.execute("DELETE FROM sb_items WHERE id = " + id);
                    st.execute(
                        "INSERT INTO sb_items VALUES ("
                            + id
                            + ", -1, 'again') ON CONFLICT DO NOTHING");
                    st.execute("INSERT INTO sb_notes VALUES (" + n % 11 + ")");
                  }
                  if (n % 9 == 0) {
                    st.execute(
                        "DELETE FROM sb_notes WHERE ctid = (SELECT min(ctid) FROM sb_notes)");
                  }
                }
              } catch (Throwable e) {
                failure.set(e);
              }
            },
            "standby-test-writer");
    t.setDaemon(true);
    return t;
  }
}
