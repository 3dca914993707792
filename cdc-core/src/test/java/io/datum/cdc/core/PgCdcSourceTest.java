package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.CdcConnectionException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.CdcReplicationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SourceState;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.MessageEvent;
import io.datum.cdc.event.PgJson;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.TruncateEvent;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDate;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The source against a real PostgreSQL 17; one server for the class, a slot per test. */
@EmbeddedPostgresTest
class PgCdcSourceTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  private final EmbeddedPostgresServer pg;

  PgCdcSourceTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  private PgCdcSource.Builder source(String name, CdcCheckpointStore store) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(name)
        .publication(name)
        .checkpointStore(store)
        .createSlot(true);
  }

  private PgLsn confirmedFlush(String slot) throws Exception {
    return PgLsn.parse(
        pg.queryString(
            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '"
                + slot
                + "'"));
  }

  private PgLsn currentWalLsn() throws Exception {
    return PgLsn.parse(pg.queryString("SELECT pg_current_wal_lsn()::text"));
  }

  @Test
  void insertsUpdatesDeletesAndTruncatesArriveWithTheirValuesAndOffsets() throws Exception {
    pg.execute(
        "CREATE TABLE rows_typed (id int PRIMARY KEY, name text, amount numeric(10,3),"
            + " ok boolean, born date, at timestamptz, doc jsonb, uid uuid, raw bytea, tags text[])",
        "CREATE PUBLICATION typed FOR TABLE rows_typed");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("typed", new MemoryCheckpointStore()).build()) {
      CompletableFuture<Void> done = source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO rows_typed VALUES (1, 'a''b', 12.340, true, '2026-11-30',"
              + " '2026-11-30 10:18:40.123456+02', '{\"k\": [1, 2]}',"
              + " 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', '\\x0102ff', '{x,NULL,\"y z\"}');"
              + " INSERT INTO rows_typed (id) VALUES (2); COMMIT",
          "UPDATE rows_typed SET name = '' WHERE id = 2",
          "UPDATE rows_typed SET id = 3 WHERE id = 2",
          "DELETE FROM rows_typed WHERE id = 1",
          "TRUNCATE rows_typed");
      List<ChangeEvent> got = events.take(6, WAIT);

      InsertEvent first = (InsertEvent) got.get(0);
      assertEquals(new TableId("public", "rows_typed"), first.table());
      Row row = first.after();
      assertEquals(1, row.get("id"));
      assertEquals("a'b", row.get("name"));
      assertEquals(new BigDecimal("12.340"), row.get("amount"));
      assertEquals(Boolean.TRUE, row.get("ok"));
      assertEquals(LocalDate.of(2026, 11, 30), row.get("born"));
      assertEquals(Instant.parse("2026-11-30T08:18:40.123456Z"), row.get("at"));
      assertEquals(new PgJson("{\"k\": [1, 2]}"), row.get("doc"));
      assertEquals(UUID.fromString("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11"), row.get("uid"));
      assertArrayEquals(new byte[] {1, 2, (byte) 0xff}, (byte[]) row.get("raw"));
      assertEquals(Arrays.asList("x", null, "y z"), row.get("tags"));
      assertEquals(1, first.key().get("id"));
      assertEquals(1, first.key().size());

      CdcOffset o0 = got.get(0).offset();
      CdcOffset o1 = got.get(1).offset();
      assertEquals(0, o0.eventIndex());
      assertEquals(1, o1.eventIndex());
      assertEquals(2, o0.eventCount());
      assertEquals(o0.txEndLsn(), o1.txEndLsn());
      assertEquals(o0.xid(), got.get(0).transaction().xid());
      assertTrue(o0.commitLsn().isBefore(o0.txEndLsn()));
      InsertEvent second = (InsertEvent) got.get(1);
      assertTrue(second.after().isNull(second.after().indexOf("name")));

      UpdateEvent emptied = (UpdateEvent) got.get(2);
      assertEquals("", emptied.after().get("name"), "empty string is not NULL");
      assertNull(emptied.before(), "REPLICA IDENTITY DEFAULT, key unchanged: no old row");
      UpdateEvent rekeyed = (UpdateEvent) got.get(3);
      assertEquals(2, rekeyed.before().get("id"), "key changed: old key sent");
      assertEquals(1, rekeyed.before().size());
      assertEquals(3, rekeyed.after().get("id"));
      DeleteEvent deleted = (DeleteEvent) got.get(4);
      assertEquals(1, deleted.before().get("id"));
      assertEquals(1, deleted.key().get("id"));
      TruncateEvent truncated = (TruncateEvent) got.get(5);
      assertEquals(List.of(new TableId("public", "rows_typed")), truncated.tables());
      assertFalse(truncated.cascade());

      for (int i = 2; i < 6; i++) {
        assertEquals(1, got.get(i).offset().eventCount());
        assertTrue(got.get(i).offset().txEndLsn().isAfter(got.get(i - 1).offset().txEndLsn()));
      }
      PgLsn last = got.get(5).offset().txEndLsn();
      await().atMost(WAIT).until(() -> !confirmedFlush("typed").isBefore(last));
      source.stop();
      done.get(10, TimeUnit.SECONDS);
    }
    pg.execute("SELECT pg_drop_replication_slot('typed')");
  }

  @Test
  void outOfOrderAcknowledgementsConfirmOnlyTheContiguousPrefix() throws Exception {
    pg.execute("CREATE TABLE ooo (id int PRIMARY KEY)", "CREATE PUBLICATION ooo FOR TABLE ooo");
    EventCollector events = new EventCollector(false);
    try (PgCdcSource source = source("ooo", new MemoryCheckpointStore()).build()) {
      source.start(events);
      // on the idle stream the source moves its watermark to a keepalive's WAL end and confirms
      // it; wait for that, else it may come after the inserts (then never: events are pending)
      // and the watermark the acknowledgements below leave alone is still 0/0
      await().atMost(WAIT).until(() -> source.watermark().equals(confirmedFlush("ooo")));
      PgLsn before = confirmedFlush("ooo");
      pg.execute(
          "INSERT INTO ooo VALUES (1), (2)",
          "INSERT INTO ooo VALUES (3)",
          "INSERT INTO ooo VALUES (4)");
      List<ChangeEvent> got = events.take(4, WAIT);
      PgLsn tx1 = got.get(0).offset().txEndLsn();
      PgLsn tx2 = got.get(2).offset().txEndLsn();
      PgLsn tx3 = got.get(3).offset().txEndLsn();

      source.checkpoints().acknowledge(got.get(3).offset()); // tx 3
      source.checkpoints().acknowledge(got.get(1).offset()); // half of tx 1
      assertEquals(before, source.watermark());
      source.checkpoints().acknowledge(got.get(0).offset()); // tx 1 complete
      assertEquals(tx1, source.watermark());
      await().atMost(WAIT).until(() -> confirmedFlush("ooo").equals(tx1));
      source.checkpoints().acknowledge(got.get(2).offset()); // tx 2: 1..3 complete
      assertEquals(tx3, source.watermark());
      await().atMost(WAIT).until(() -> confirmedFlush("ooo").equals(tx3));
      assertTrue(tx2.isBefore(tx3));
    }
    pg.execute("SELECT pg_drop_replication_slot('ooo')");
  }

  @Test
  void restartWithTheSameFileStoreDeliversExactlyTheUnacknowledgedEvents(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE resume (id int PRIMARY KEY)", "CREATE PUBLICATION resume FOR TABLE resume");
    List<ChangeEvent> first;
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      EventCollector events = new EventCollector(false);
      try (PgCdcSource source = source("resume", store).build()) {
        source.start(events);
        pg.execute(
            "INSERT INTO resume VALUES (1), (2)", // A
            "INSERT INTO resume VALUES (3), (4), (5)", // B
            "INSERT INTO resume VALUES (6)"); // C
        first = events.take(6, WAIT);
        source.checkpoints().acknowledge(first.get(2).offset()); // B#0, beyond the watermark
        source.checkpoints().acknowledge(first.get(0).offset());
        source.checkpoints().acknowledge(first.get(1).offset()); // A complete: watermark moves
        assertEquals(first.get(0).offset().txEndLsn(), source.watermark());
      }
    }
    pg.execute("INSERT INTO resume VALUES (7)"); // D, while no source runs
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      EventCollector events = new EventCollector(true);
      try (PgCdcSource source = source("resume", store).createSlot(false).build()) {
        source.start(events);
        List<ChangeEvent> again = events.take(4, WAIT);
        assertEquals(List.of(4, 5, 6, 7), ids(again), "B#1, B#2, C and D; not A, not B#0");
        assertEquals(first.get(3).offset(), again.get(0).offset());
        assertTrue(again.get(0).transaction().redelivered(), "B was partly acknowledged before");
        assertFalse(again.get(3).transaction().redelivered(), "D is new");
        PgLsn d = again.get(3).offset().txEndLsn();
        await().atMost(WAIT).until(() -> source.watermark().equals(d));
        assertTrue(events.drain().isEmpty());
      }
    }
    pg.execute("SELECT pg_drop_replication_slot('resume')");
  }

  @Test
  void aGracefulStopKeepsTheAcknowledgementsOfAnIncompleteTransaction(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE partial (id int PRIMARY KEY)",
        "CREATE PUBLICATION partial FOR TABLE partial");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      EventCollector events = new EventCollector(false);
      try (PgCdcSource source = source("partial", store).build()) {
        source.start(events);
        pg.execute("INSERT INTO partial SELECT generate_series(1, 5)");
        List<ChangeEvent> got = events.take(5, WAIT);
        for (int i : new int[] {0, 1, 3}) {
          source.checkpoints().acknowledge(got.get(i).offset());
        }
        assertTrue(
            source.watermark().isBefore(got.get(0).offset().txEndLsn()),
            "the transaction is incomplete");
      }
      try (PgCdcSource source = source("partial", store).createSlot(false).build()) {
        EventCollector again = new EventCollector(true);
        source.start(again);
        assertEquals(List.of(3, 5), ids(again.take(2, WAIT)), "only the unacknowledged events");
      }
    }
    pg.execute("SELECT pg_drop_replication_slot('partial')");
  }

  @Test
  void aSlotAdvancedBehindTheStoresBackIsAnErrorUnlessTrusted(@TempDir Path dir) throws Exception {
    pg.execute(
        "CREATE TABLE moved (id int PRIMARY KEY)", "CREATE PUBLICATION moved FOR TABLE moved");
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      EventCollector events = new EventCollector(true);
      try (PgCdcSource source = source("moved", store).build()) {
        source.start(events);
        pg.execute("INSERT INTO moved VALUES (1)");
        PgLsn end = events.take(1, WAIT).get(0).offset().txEndLsn();
        await().atMost(WAIT).until(() -> source.watermark().equals(end));
      }
      pg.execute(
          "INSERT INTO moved VALUES (2)", // lost to whoever advances the slot
          "SELECT pg_replication_slot_advance('moved', pg_current_wal_lsn())");
      CdcReplicationException e =
          assertThrows(
              CdcReplicationException.class,
              () ->
                  source("moved", store).createSlot(false).build().start(new EventCollector(true)));
      assertTrue(
          e.getMessage().contains("has confirmed_flush_lsn")
              && e.getMessage().contains("trustSlotPosition(true)"),
          e.getMessage());
      assertEquals(CdcReplicationException.Reason.SLOT_AHEAD, e.reason());

      EventCollector trusted = new EventCollector(true);
      try (PgCdcSource source =
          source("moved", store).createSlot(false).trustSlotPosition(true).build()) {
        source.start(trusted);
        pg.execute("INSERT INTO moved VALUES (3)");
        assertEquals(List.of(3), ids(trusted.take(1, WAIT)));
      }
      pg.execute("SELECT pg_drop_replication_slot('moved')");
      CdcReplicationException dropped =
          assertThrows(
              CdcReplicationException.class,
              () -> source("moved", store).build().start(new EventCollector(true)));
      assertTrue(
          dropped.getMessage().contains("\"moved\" does not exist, but"), dropped.getMessage());
      assertEquals(CdcReplicationException.Reason.SLOT_MISSING, dropped.reason());
      assertEquals(
          "0",
          pg.queryString("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'moved'"),
          "no new slot silently created after the stored watermark");
    }
  }

  @Test
  void withReconnectATerminatedWalsenderIsSurvivedAndUnacknowledgedEventsComeAgain()
      throws Exception {
    pg.execute(
        "CREATE TABLE again (id int PRIMARY KEY)", "CREATE PUBLICATION again FOR TABLE again");
    EventCollector events = new EventCollector(false);
    try (PgCdcSource source =
        source("again", new MemoryCheckpointStore())
            .reconnect(20, Duration.ofMillis(50), Duration.ofSeconds(1))
            .build()) {
      assertEquals(SourceState.NEW, source.state());
      CompletableFuture<Void> done = source.start(events);
      assertEquals(SourceState.STREAMING, source.state());
      pg.execute("INSERT INTO again VALUES (1), (2), (3)");
      List<ChangeEvent> before = events.take(3, WAIT);
      source.checkpoints().acknowledge(before.get(0).offset());
      source.checkpoints().acknowledge(before.get(2).offset());
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'again'");
      await().atMost(WAIT).until(() -> source.reconnects() == 1);
      pg.execute("INSERT INTO again VALUES (4)");
      List<ChangeEvent> after = events.take(2, WAIT);
      assertEquals(
          List.of(2, 4), ids(after), "only the unacknowledged event of the first transaction");
      assertEquals(before.get(1).offset(), after.get(0).offset());
      assertTrue(after.get(0).transaction().redelivered(), "delivered before the loss");
      assertFalse(after.get(1).transaction().redelivered(), "new after the loss");
      assertFalse(before.get(0).transaction().redelivered());
      source.checkpoints().acknowledgeTransaction(after.get(0).offset());
      source.checkpoints().acknowledge(after.get(1).offset());
      PgLsn end = after.get(1).offset().txEndLsn();
      await().atMost(WAIT).until(() -> confirmedFlush("again").equals(end));
      assertFalse(done.isDone());
      SourceMetrics metrics = source.metrics();
      assertEquals(end, metrics.watermark());
      assertEquals(0, metrics.pendingTransactions());
      assertEquals(0, metrics.pendingEvents());
      assertEquals(5, metrics.eventsHandled(), "3 before the loss, 1 again, 1 new");
      assertEquals(3, metrics.transactionsDelivered(), "1 before, 1 again, 1 new");
      assertEquals(1, metrics.reconnects());
      assertTrue(metrics.eventsPerSecond() > 0);
      assertEquals(SourceState.STREAMING, source.state(), "back after the reconnect");
      source.stop();
      done.get(30, TimeUnit.SECONDS);
      assertEquals(SourceState.STOPPED, source.state());
    }
    pg.execute("SELECT pg_drop_replication_slot('again')");
  }

  @Test
  void withoutReconnectATerminatedWalsenderFailsTheSourceWithAConnectionError() throws Exception {
    pg.execute("CREATE TABLE killed (id int)", "CREATE PUBLICATION killed FOR TABLE killed");
    try (PgCdcSource source =
        source("killed", new MemoryCheckpointStore())
            .reconnect(0, Duration.ofMillis(1), Duration.ofMillis(1))
            .build()) {
      CompletableFuture<Void> done = source.start(new EventCollector(true));
      await()
          .atMost(WAIT)
          .until(
              () ->
                  "t"
                      .equals(
                          pg.queryString(
                              "SELECT active FROM pg_replication_slots WHERE slot_name = 'killed'")));
      pg.execute(
          "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = 'killed'");
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> done.get(30, TimeUnit.SECONDS));
      assertInstanceOf(CdcConnectionException.class, e.getCause(), e.getCause().toString());
      assertEquals(SourceState.FAILED, source.state());
    }
    pg.execute("SELECT pg_drop_replication_slot('killed')");
  }

  @Test
  void aQuietSlotFollowsTheWalOfUnpublishedTables() throws Exception {
    pg.execute(
        "CREATE TABLE published (id int)",
        "CREATE TABLE unpublished (id int, filler text)",
        "CREATE PUBLICATION quiet FOR TABLE published");
    try (PgCdcSource source = source("quiet", new MemoryCheckpointStore()).build()) {
      source.start(new EventCollector(true));
      PgLsn start = currentWalLsn();
      // about 100 MB of WAL for a table the slot does not publish
      pg.execute(
          "INSERT INTO unpublished SELECT g, repeat('x', 400) FROM generate_series(1, 230000) g");
      PgLsn written = currentWalLsn();
      assertTrue(
          written.asLong() - start.asLong() > 100_000_000L,
          "wrote only " + (written.asLong() - start.asLong()) + " bytes of WAL");
      await().atMost(WAIT).until(() -> !confirmedFlush("quiet").isBefore(written));
      // restart_lsn moves at the next running-transactions record (PostgreSQL 16+: on demand)
      await()
          .atMost(WAIT)
          .until(
              () -> {
                pg.execute("SELECT pg_log_standby_snapshot()");
                return Long.parseLong(
                        pg.queryString(
                            "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn)::bigint"
                                + " FROM pg_replication_slots WHERE slot_name = 'quiet'"))
                    < 16L * 1024 * 1024;
              });
    }
    pg.execute("SELECT pg_drop_replication_slot('quiet')", "DROP TABLE unpublished");
  }

  @Test
  void logicalDecodingMessagesArriveTransactionalOrNot() throws Exception {
    pg.execute("CREATE TABLE msgs (id int PRIMARY KEY)", "CREATE PUBLICATION msgs FOR TABLE msgs");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("msgs", new MemoryCheckpointStore()).messages(true).build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO msgs VALUES (1);"
              + " SELECT pg_logical_emit_message(true, 'outbox', convert_to('héllo', 'UTF8')); COMMIT",
          "SELECT pg_logical_emit_message(false, 'audit', '\\x00ff'::bytea)");
      List<ChangeEvent> got = events.take(3, WAIT);
      assertEquals(2, got.get(0).offset().eventCount());
      MessageEvent inTransaction = (MessageEvent) got.get(1);
      assertTrue(inTransaction.transactional());
      assertEquals("outbox", inTransaction.prefix());
      assertEquals("héllo", new String(inTransaction.content(), StandardCharsets.UTF_8));
      assertEquals(got.get(0).offset().txEndLsn(), inTransaction.offset().txEndLsn());
      MessageEvent alone = (MessageEvent) got.get(2);
      assertFalse(alone.transactional());
      assertEquals("audit", alone.prefix());
      assertArrayEquals(new byte[] {0, (byte) 0xff}, alone.content());
      assertEquals(1, alone.offset().eventCount());
      // pgoutput reports a message at the end of its WAL record: acknowledged, the watermark is
      // never after the server's WAL end, even when the message is the last record written
      assertEquals(alone.offset().commitLsn(), alone.offset().txEndLsn());
      PgLsn end = alone.offset().txEndLsn();
      await().atMost(WAIT).until(() -> !confirmedFlush("msgs").isBefore(end));
      try (java.sql.Connection c = pg.getConnection();
          java.sql.Statement st = c.createStatement();
          java.sql.ResultSet rs = st.executeQuery("SELECT pg_current_wal_lsn()::text")) {
        rs.next();
        assertFalse(end.isAfter(PgLsn.parse(rs.getString(1))), "watermark after the WAL's end");
      }
    }
    pg.execute("SELECT pg_drop_replication_slot('msgs')");
  }

  @Test
  void aNewColumnIsDecodedWithTheRelationOfItsTime() throws Exception {
    pg.execute("CREATE TABLE ddl (id int PRIMARY KEY)", "CREATE PUBLICATION ddl FOR TABLE ddl");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source = source("ddl", new MemoryCheckpointStore()).build()) {
      source.start(events);
      pg.execute(
          "INSERT INTO ddl VALUES (1)",
          "ALTER TABLE ddl ADD COLUMN note text",
          "INSERT INTO ddl VALUES (2, 'n')");
      List<ChangeEvent> got = events.take(2, WAIT);
      assertEquals(1, ((InsertEvent) got.get(0)).after().size());
      assertEquals("n", ((InsertEvent) got.get(1)).after().get("note"));
    }
    pg.execute("SELECT pg_drop_replication_slot('ddl')");
  }

  @Test
  void missingPublicationAndActiveSlotAreClearErrors() throws Exception {
    CdcReplicationException missing =
        assertThrows(
            CdcReplicationException.class,
            () ->
                source("nopub", new MemoryCheckpointStore())
                    .build()
                    .start(new EventCollector(true)));
    assertTrue(
        missing.getMessage().contains("publication \"nopub\" does not exist"),
        missing.getMessage());
    assertEquals(CdcReplicationException.Reason.PUBLICATION_MISSING, missing.reason());

    pg.execute("CREATE TABLE busy (id int)", "CREATE PUBLICATION busy FOR TABLE busy");
    try (PgCdcSource first = source("busy", new MemoryCheckpointStore()).build()) {
      first.start(new EventCollector(true));
      CdcReplicationException active =
          assertThrows(
              CdcReplicationException.class,
              () ->
                  source("busy", new MemoryCheckpointStore())
                      .build()
                      .start(new EventCollector(true)));
      assertTrue(
          active.getMessage().matches(".*slot \"busy\" is active for PID \\d+.*"),
          active.getMessage());
      assertEquals(CdcReplicationException.Reason.SLOT_ACTIVE, active.reason());

      // a second consumer that waits for the slot takes over once the first stops
      EventCollector events = new EventCollector(true);
      PgCdcSource second =
          source("busy", new MemoryCheckpointStore()).waitForSlot(Duration.ofSeconds(30)).build();
      CompletableFuture<CompletableFuture<Void>> started =
          CompletableFuture.supplyAsync(() -> second.start(events));
      first.stop();
      started.get(60, TimeUnit.SECONDS);
      pg.execute("INSERT INTO busy VALUES (7)");
      assertEquals(7, ((InsertEvent) events.take(1, WAIT).get(0)).after().get("id"));
      second.dropSlot(false);
    }
    assertEquals(
        "0", pg.queryString("SELECT count(*) FROM pg_replication_slots WHERE slot_name = 'busy'"));
  }

  private static List<Integer> ids(List<ChangeEvent> events) {
    return events.stream()
        .map(e -> (Integer) ((InsertEvent) e).after().get("id"))
        .collect(Collectors.toList());
  }

  @Test
  void asynchronousAcknowledgementsCompleteOnceStoredAndFailWithoutThrowing(@TempDir Path dir)
      throws Exception {
    pg.execute(
        "CREATE TABLE async_acks (id int PRIMARY KEY)",
        "CREATE PUBLICATION async_acks FOR TABLE async_acks");
    List<CompletableFuture<Void>> acks = new CopyOnWriteArrayList<>();
    CountDownLatch all = new CountDownLatch(300);
    try (FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source = source("async_acks", store).build()) {
      AtomicReference<PgLsn> txEnd = new AtomicReference<>();
      source.start(
          (event, checkpoints) -> {
            txEnd.set(event.offset().txEndLsn());
            acks.add(checkpoints.acknowledgeAsync(event.offset()));
            all.countDown();
          });
      pg.execute("INSERT INTO async_acks SELECT generate_series(1, 300)");
      assertTrue(all.await(60, TimeUnit.SECONDS));
      CompletableFuture.allOf(acks.toArray(new CompletableFuture[0])).get(60, TimeUnit.SECONDS);
      PgLsn end = txEnd.get();
      assertEquals(
          end, store.load("async_acks").orElseThrow().watermark(), "durable when complete");
      assertTrue(store.load("async_acks").orElseThrow().acknowledgedBeyond().isEmpty());
      assertEquals(end, source.watermark());
      CdcOffset foreign = new CdcOffset("other", end, end, 1, 0, 1);
      CompletableFuture<Void> refused = source.checkpoints().acknowledgeAsync(foreign);
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> refused.get(10, TimeUnit.SECONDS));
      assertTrue(e.getCause().getMessage().contains("other"), e.getCause().getMessage());
    }
    pg.execute("SELECT pg_drop_replication_slot('async_acks')");
  }

  @Test
  void aStoredWatermarkBeyondTheServersWalIsRefusedAndNeverConfirmed() throws Exception {
    pg.execute(
        "CREATE TABLE elsewhere (id int)",
        "CREATE PUBLICATION elsewhere FOR TABLE elsewhere",
        "SELECT pg_create_logical_replication_slot('elsewhere', 'pgoutput')");
    PgLsn before = confirmedFlush("elsewhere");
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    store.store(CdcCheckpoint.atWatermark("elsewhere", PgLsn.parse("FF/0")));
    try (PgCdcSource source = source("elsewhere", store).build()) {
      CdcReplicationException e =
          assertThrows(CdcReplicationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(
          e.getMessage().contains("watermark FF/0")
              && e.getMessage().contains("after the server's current WAL position"),
          e.getMessage());
      assertEquals(CdcReplicationException.Reason.WATERMARK_AFTER_WAL, e.reason());
    }
    assertEquals(before, confirmedFlush("elsewhere"), "the slot was not moved");
    pg.execute("SELECT pg_drop_replication_slot('elsewhere')");
  }

  @Test
  void aSpillDirectoryThatIsNotWritableIsRefusedAtStart(@TempDir Path dir) throws Exception {
    pg.execute("CREATE TABLE nospill (id int)", "CREATE PUBLICATION nospill FOR TABLE nospill");
    Path missing = dir.resolve("missing");
    try (PgCdcSource source =
        source("nospill", new MemoryCheckpointStore()).spillDirectory(missing).build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(e.getMessage().contains("spill directory " + missing), e.getMessage());
    }
  }
}
