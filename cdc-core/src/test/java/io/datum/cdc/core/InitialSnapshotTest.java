package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Initial snapshots against PostgreSQL 17: at a new slot's exported snapshot (parallel workers,
 * tables split into ranges, a table without a key), and online at an existing slot, each while a
 * writer inserts, updates (also the key), deletes and truncates; the events replayed into maps
 * equal the tables' content at the end, row by row.
 */
@EmbeddedPostgresTest
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class InitialSnapshotTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final TableId ORDERS = new TableId("public", "orders");
  private static final TableId LINES = new TableId("public", "lines");
  private static final TableId LOG = new TableId("public", "audit_log");
  private static EmbeddedPostgresServer pg;

  @BeforeAll
  static void tables(EmbeddedPostgresServer server) {
    pg = server;
  }

  private static void createTables(String suffix) throws Exception {
    pg.execute(
        "DROP TABLE IF EXISTS orders, lines, audit_log",
        "DROP PUBLICATION IF EXISTS snap_" + suffix,
        "CREATE TABLE orders (id bigint PRIMARY KEY, v int, note text)",
        "CREATE TABLE lines (order_id bigint, line int, qty int, PRIMARY KEY (order_id, line))",
        "CREATE TABLE audit_log (at int, what text)",
        "ALTER TABLE audit_log REPLICA IDENTITY FULL",
        "INSERT INTO orders SELECT g, g % 97, repeat('n', g % 50) FROM generate_series(1, 20000) g",
        "INSERT INTO lines SELECT g / 4, g % 4, g FROM generate_series(1, 12000) g",
        "INSERT INTO audit_log SELECT g, 'boot ' || g FROM generate_series(1, 3000) g",
        "ANALYZE orders, lines, audit_log",
        "CREATE PUBLICATION snap_" + suffix + " FOR TABLE orders, lines, audit_log");
  }

  private static PgCdcSource.Builder source(String slot, String publication) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(slot)
        .publication(publication)
        .snapshotChunkRows(700);
  }

  /** Random changes until stopped: inserts, updates (some of the key), deletes, a truncate. */
  private static Thread writer(AtomicBoolean stop, long seed) {
    Thread t =
        new Thread(
            () -> {
              Random random = new Random(seed);
              try (Connection c = pg.getConnection();
                  Statement st = c.createStatement()) {
                int n = 0;
                while (!stop.get()) {
                  long id = 1 + random.nextInt(24000);
                  switch (random.nextInt(6)) {
                    case 0 ->
                        st.execute(
                            "INSERT INTO orders VALUES ("
                                + (30000 + n)
                                + ", 1, 'new') ON CONFLICT DO NOTHING");
                    case 1 -> st.execute("UPDATE orders SET v = v + 1000 WHERE id = " + id);
                    case 2 -> st.execute("DELETE FROM orders WHERE id = " + id);
                    case 3 ->
                        st.execute(
                            "UPDATE orders SET id = id + 100000 WHERE id = "
                                + id
                                + " AND NOT EXISTS (SELECT 1 FROM orders WHERE id = "
                                + (id + 100000)
                                + ")");
                    case 4 ->
                        st.execute(
                            "UPDATE lines SET qty = qty + 1 WHERE order_id = " + (id % 3000));
                    default ->
                        st.execute("INSERT INTO audit_log VALUES (" + (10000 + n) + ", 'w')");
                  }
                  if (n == 150) {
                    st.execute("TRUNCATE lines");
                    st.execute("INSERT INTO lines SELECT g, 1, g FROM generate_series(1, 500) g");
                  }
                  n++;
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            },
            "writer");
    t.setDaemon(true);
    return t;
  }

  private static void assertReplicaEqualsTables(SnapshotReplica replica) throws Exception {
    // a sentinel committed after the writer stopped: once it is replayed, everything before is
    pg.execute("INSERT INTO orders VALUES (-1, -1, 'sentinel')");
    await().atMost(WAIT).until(() -> replica.table(ORDERS).containsKey(List.<Object>of(-1L)));
    try (Connection c = pg.getConnection()) {
      assertEquals(
          SnapshotReplica.content(c, ORDERS, List.of("id")), replica.sorted(ORDERS), "orders");
      assertEquals(
          SnapshotReplica.content(c, LINES, List.of("order_id", "line")),
          replica.sorted(LINES),
          "lines");
      assertEquals(SnapshotReplica.content(c, LOG, null), replica.sorted(LOG), "audit_log");
    }
  }

  @Test
  void atTheExportedSnapshotEveryRowOnceThenEveryChange() throws Exception {
    createTables("exported");
    SnapshotReplica replica =
        new SnapshotReplica().key(ORDERS, "id").key(LINES, "order_id", "line");
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer = writer(stop, 1);
    writer.start();
    try (PgCdcSource s =
        source("snap_exported", "snap_exported")
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL)
            .snapshotParallelism(2)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      CompletableFuture<Void> done = s.start(replica);
      await().atMost(WAIT).until(() -> replica.reads.get() > 0 && replica.changes.get() > 300);
      stop.set(true);
      writer.join();
      assertReplicaEqualsTables(replica);
      // every read came before the first change (the stream starts at the consistent point)
      assertTrue(replica.readsAfterChanges.isEmpty(), "reads after changes");
      // each key read once
      for (Map<List<Object>, Integer> counts : replica.readCounts.values()) {
        counts.forEach((k, n) -> assertEquals(1, n, "reads of " + k));
      }
      ReadEvent first = replica.readEvents.get(0);
      assertEquals("initial", first.snapshot().id());
      assertEquals(first.offset().txEndLsn(), first.snapshot().consistentWith());
      long lastOfTable =
          replica.readEvents.stream().filter(r -> r.snapshot().lastOfTable()).count();
      assertTrue(lastOfTable >= 1 && lastOfTable <= 3, "last rows: " + lastOfTable);
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      pg.execute("SELECT pg_drop_replication_slot('snap_exported')");
    }
  }

  @Test
  void snapshottingUntilTheStreamStartsAndReadRowsCountedApartFromChangesInEachRun()
      throws Exception {
    pg.execute(
        "CREATE TABLE phases (id int PRIMARY KEY)",
        "INSERT INTO phases SELECT g FROM generate_series(1, 1000) g",
        "ANALYZE phases",
        "CREATE PUBLICATION phases_pub FOR TABLE phases");
    TableId phases = new TableId("public", "phases");
    CountDownLatch firstRead = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    AtomicInteger reads = new AtomicInteger();
    AtomicInteger changes = new AtomicInteger();
    try (PgCdcSource source =
        source("phases_slot", "phases_pub")
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL)
            .snapshotChunkRows(100)
            // far fewer than the 1000 rows: with the handler held, the read cannot finish
            .handoffCapacity(16)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      CompletableFuture<Void> done =
          source.start(
              (event, handle) -> {
                if (event instanceof ReadEvent) {
                  firstRead.countDown();
                  if (!release.await(60, TimeUnit.SECONDS)) {
                    throw new IllegalStateException("never released");
                  }
                  reads.incrementAndGet();
                } else {
                  changes.incrementAndGet();
                }
                handle.acknowledge(event.offset());
              });
      assertTrue(firstRead.await(60, TimeUnit.SECONDS), "no read row");
      // the exported snapshot is read: nothing streams yet, and read rows are no changes
      assertEquals(SourceState.SNAPSHOTTING, source.state());
      assertTrue(source.snapshotInProgress());
      pg.execute("INSERT INTO phases SELECT g FROM generate_series(1001, 1005) g");
      assertEquals(SourceState.SNAPSHOTTING, source.state(), "the stream waits for the snapshot");
      assertEquals(0, source.metrics().eventsHandled());
      release.countDown();
      await().atMost(WAIT).until(() -> changes.get() == 5);
      assertEquals(SourceState.STREAMING, source.state());
      await().atMost(WAIT).until(() -> !source.snapshotInProgress());
      SourceMetrics initial = source.metrics();
      assertEquals(1000, reads.get());
      assertEquals(5, initial.eventsHandled(), "the 5 inserts, not the 1000 read rows");
      assertEquals(1000, initial.snapshotRowsRead());
      assertEquals(1000, initial.snapshotRunRowsRead());
      assertEquals(1000, initial.snapshotRowsEstimated(), "reltuples after ANALYZE");
      assertFalse(initial.snapshotResumed());
      await().atMost(WAIT).until(() -> source.metrics().eventsAcknowledged() == 5);

      // a snapshot asked for after the first completed counts its own rows from 0
      pg.execute("ANALYZE phases");
      source.snapshot(phases);
      await().atMost(WAIT).until(() -> reads.get() == 2005 && !source.snapshotInProgress());
      SourceMetrics requested = source.metrics();
      assertEquals(2005, requested.snapshotRowsRead(), "since the source started");
      assertEquals(1005, requested.snapshotRunRowsRead(), "this run's");
      assertEquals(1005, requested.snapshotRowsEstimated(), "this run's tables");
      assertEquals(2, requested.snapshotTablesDone(), "since the source started");
      assertEquals(1, requested.snapshotRunTablesDone(), "this run's");
      assertEquals(
          requested.snapshotChunksDone() - initial.snapshotChunksDone(),
          requested.snapshotRunChunks(),
          "this run's chunks");
      assertEquals(5, requested.eventsHandled());
      source.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('phases_slot')");
    }
  }

  @Test
  void theLastRowIsMarkedEvenWhenTheTableHoldsAMultipleOfTheChunkSize() throws Exception {
    // 600 rows in chunks of 200: the last chunk is full, and nothing after it is read to learn
    // that the table ended (before, the mark went to no row: the empty chunk after it had none)
    pg.execute(
        "CREATE TABLE exact_chunks (id int PRIMARY KEY)",
        "INSERT INTO exact_chunks SELECT g FROM generate_series(1, 600) g",
        "CREATE PUBLICATION exact_pub FOR TABLE exact_chunks");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("exact_slot", "exact_pub")
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL)
            .snapshotChunkRows(200)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      source.start(events);
      List<ChangeEvent> reads = events.take(600, WAIT);
      List<ReadEvent> marked =
          reads.stream()
              .map(ReadEvent.class::cast)
              .filter(r -> r.snapshot().lastOfTable())
              .toList();
      assertEquals(1, marked.size(), "one row is the table's last");
      assertEquals(600, marked.get(0).after().get("id"));
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('exact_slot')");
    }
  }

  @Test
  void atAnExistingSlotOnlineWhileStreaming() throws Exception {
    createTables("online");
    pg.execute("SELECT pg_create_logical_replication_slot('snap_online', 'pgoutput')");
    // audit_log has no key: read whole at a temporary slot's exported snapshot, after a reset
    SnapshotReplica replica =
        new SnapshotReplica().key(ORDERS, "id").key(LINES, "order_id", "line").multiset(LOG);
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer = writer(stop, 2);
    writer.start();
    try (PgCdcSource s =
        source("snap_online", "snap_online")
            .snapshot(SnapshotMode.INITIAL)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      CompletableFuture<Void> done = s.start(replica);
      await().atMost(WAIT).until(() -> replica.reads.get() >= 20000 || done.isDone());
      stop.set(true);
      writer.join();
      pg.execute("INSERT INTO orders VALUES (-1, -1, 'sentinel')");
      await().atMost(WAIT).until(() -> replica.table(ORDERS).containsKey(List.<Object>of(-1L)));
      try (Connection c = pg.getConnection()) {
        await().atMost(WAIT).until(() -> readsDone(s));
        assertEquals(
            SnapshotReplica.content(c, ORDERS, List.of("id")), replica.sorted(ORDERS), "orders");
        assertEquals(
            SnapshotReplica.content(c, LINES, List.of("order_id", "line")),
            replica.sorted(LINES),
            "lines");
        assertEquals(SnapshotReplica.multisetContent(c, LOG), replica.multisetOf(LOG), "audit_log");
      }
      assertEquals(1, replica.resets.size(), "one reset, of audit_log: " + replica.resets);
      assertEquals(List.of(LOG), replica.resets.get(0).tables());
      assertEquals("initial", replica.resets.get(0).snapshot().id());
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      pg.execute("SELECT pg_drop_replication_slot('snap_online')");
    }
  }

  private static boolean readsDone(PgCdcSource s) {
    return !s.snapshotInProgress();
  }

  @Test
  void initialOnlyStopsOnceEveryRowIsAcknowledgedAndLeavesTheSlotAtItsConsistentPoint()
      throws Exception {
    createTables("only");
    SnapshotReplica replica =
        new SnapshotReplica().key(ORDERS, "id").key(LINES, "order_id", "line");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    try (PgCdcSource s =
        source("snap_only", "snap_only")
            .createSlot(true)
            .snapshot(SnapshotMode.INITIAL_ONLY)
            .snapshotParallelism(3)
            .checkpointStore(store)
            .build()) {
      s.start(replica).get(90, TimeUnit.SECONDS);
    }
    assertEquals(20000 + 12000 + 3000, replica.reads.get(), "rows read");
    assertEquals(0, replica.changes.get());
    assertTrue(store.load("snap_only").orElseThrow().snapshot().initialCompleted());
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT confirmed_flush_lsn::text FROM pg_replication_slots"
                    + " WHERE slot_name = 'snap_only'")) {
      rs.next();
      assertEquals(
          replica.readEvents.get(0).snapshot().consistentWith(), PgLsn.parse(rs.getString(1)));
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('snap_only')");
    }
  }

  @Test
  void creatingTheSlotWithItsSnapshotWaitsAtMostTheSlotCreationTimeout() throws Exception {
    createTables("wait");
    try (Connection open = pg.getConnection();
        Statement st = open.createStatement()) {
      open.setAutoCommit(false);
      st.execute("INSERT INTO orders VALUES (999999, 0, 'open')"); // an xid, not committed
      try (PgCdcSource s =
          source("snap_wait", "snap_wait")
              .createSlot(true)
              .snapshot(SnapshotMode.INITIAL)
              .slotCreationTimeout(Duration.ofSeconds(1))
              .checkpointStore(new MemoryCheckpointStore())
              .build()) {
        io.datum.cdc.CdcReplicationException e =
            org.junit.jupiter.api.Assertions.assertThrows(
                io.datum.cdc.CdcReplicationException.class, () -> s.start(new SnapshotReplica()));
        assertTrue(e.getMessage().contains("waited 1.0 s"), e.getMessage());
      }
      open.rollback();
    }
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'snap_wait'")) {
      rs.next();
      assertEquals(0, rs.getInt(1), "no slot left behind");
    }
  }
}
