package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.config.StreamingMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Transaction assembly against PostgreSQL 17: streamed transactions (a small
 * logical_decoding_work_mem makes the server stream), their aborts and subtransaction aborts,
 * prepared transactions with two_phase, and spilling past the memory budget.
 */
@EmbeddedPostgresTest(settings = {"logical_decoding_work_mem=64kB", "max_prepared_transactions=10"})
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TransactionAssemblyTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  /** A row of about 200 bytes, so that a few hundred rows exceed logical_decoding_work_mem. */
  private static final String FILLER = "repeat('x', 200)";

  private final EmbeddedPostgresServer pg;

  TransactionAssemblyTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /**
   * Creating a slot waits for every transaction in progress, prepared ones included, so a test that
   * failed with a transaction still prepared would block the next: roll them back.
   */
  @AfterEach
  void rollBackPreparedTransactions() throws Exception {
    List<String> gids = new ArrayList<>();
    try (var c = pg.getConnection();
        var st = c.createStatement();
        var rs = st.executeQuery("SELECT gid FROM pg_prepared_xacts")) {
      while (rs.next()) {
        gids.add(rs.getString(1));
      }
    }
    for (String gid : gids) {
      pg.execute("ROLLBACK PREPARED '" + gid + "'");
    }
  }

  private PgCdcSource.Builder source(String name, CdcCheckpointStore store) throws Exception {
    pg.execute(
        "CREATE TABLE IF NOT EXISTS " + name + " (id int PRIMARY KEY, filler text)",
        "DROP PUBLICATION IF EXISTS " + name,
        "CREATE PUBLICATION " + name + " FOR TABLE " + name);
    if ("0"
        .equals(
            pg.queryString(
                "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '" + name + "'"))) {
      pg.execute("SELECT pg_create_logical_replication_slot('" + name + "', 'pgoutput')");
    }
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .slot(name)
        .publication(name)
        .checkpointStore(store);
  }

  private static List<Integer> ids(List<ChangeEvent> events) {
    List<Integer> ids = new ArrayList<>();
    for (ChangeEvent e : events) {
      ids.add((Integer) ((InsertEvent) e).after().get("id"));
    }
    return ids;
  }

  private static List<Integer> range(int fromInclusive, int toInclusive) {
    return IntStream.rangeClosed(fromInclusive, toInclusive).boxed().toList();
  }

  /** Asserts the events form one transaction of exactly {@code n} events, indexes 0..n-1. */
  private static void assertOneTransaction(List<ChangeEvent> events, int n) {
    assertEquals(n, events.size());
    PgLsn end = events.get(0).offset().txEndLsn();
    for (int i = 0; i < n; i++) {
      assertEquals(i, events.get(i).offset().eventIndex());
      assertEquals(n, events.get(i).offset().eventCount());
      assertEquals(n, events.get(i).transaction().eventCount());
      assertEquals(end, events.get(i).offset().txEndLsn());
    }
  }

  private long streamedTransactions(String slot) throws Exception {
    return Long.parseLong(
        pg.queryString(
            "SELECT coalesce(sum(stream_txns), 0) FROM pg_stat_replication_slots WHERE slot_name = '"
                + slot
                + "'"));
  }

  private void dropSlot(String slot) throws Exception {
    await()
        .atMost(WAIT)
        .until(
            () ->
                "f"
                    .equals(
                        pg.queryString(
                            "SELECT active FROM pg_replication_slots WHERE slot_name = '"
                                + slot
                                + "'")));
    pg.execute("SELECT pg_drop_replication_slot('" + slot + "')");
  }

  @Test
  void aStreamedTransactionIsDeliveredWholeAtItsCommitAndAnAbortedOneNever() throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("streamed", new MemoryCheckpointStore()).streaming(StreamingMode.ON).build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO streamed SELECT g, "
              + FILLER
              + " FROM generate_series(1, 3000) g; ROLLBACK",
          "BEGIN; INSERT INTO streamed SELECT g, "
              + FILLER
              + " FROM generate_series(1, 2000) g; COMMIT");
      List<ChangeEvent> got = events.take(2000, WAIT);
      assertOneTransaction(got, 2000);
      assertEquals(range(1, 2000), ids(got));
      pg.execute("INSERT INTO streamed VALUES (5000, 'after')");
      assertEquals(List.of(5000), ids(events.take(1, WAIT)), "nothing of the aborted transaction");
      await().atMost(WAIT).until(() -> streamedTransactions("streamed") >= 2);
    }
    dropSlot("streamed");
  }

  @Test
  void abortedSubtransactionsOfAStreamedTransactionAreDropped() throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("subxacts", new MemoryCheckpointStore()).streaming(StreamingMode.ON).build()) {
      source.start(events);
      pg.execute(
          "BEGIN;"
              + " INSERT INTO subxacts SELECT g, "
              + FILLER
              + " FROM generate_series(1, 1000) g;"
              + " SAVEPOINT a;"
              + " INSERT INTO subxacts SELECT g, "
              + FILLER
              + " FROM generate_series(10001, 11000) g;"
              + " SAVEPOINT b;"
              + " INSERT INTO subxacts SELECT g, "
              + FILLER
              + " FROM generate_series(20001, 21000) g;"
              + " ROLLBACK TO SAVEPOINT a;" // aborts a and the nested b
              + " SAVEPOINT c;"
              + " INSERT INTO subxacts SELECT g, "
              + FILLER
              + " FROM generate_series(30001, 31000) g;"
              + " RELEASE SAVEPOINT c;"
              + " INSERT INTO subxacts SELECT g, "
              + FILLER
              + " FROM generate_series(40001, 40500) g;"
              + " COMMIT");
      List<ChangeEvent> got = events.take(2500, WAIT);
      assertOneTransaction(got, 2500);
      List<Integer> expected = new ArrayList<>(range(1, 1000));
      expected.addAll(range(30001, 31000));
      expected.addAll(range(40001, 40500));
      assertEquals(expected, ids(got));
      pg.execute(
          "INSERT INTO subxacts VALUES (1, 'next') ON CONFLICT (id) DO UPDATE SET filler = 'next'");
      assertEquals(
          "next",
          events.take(1, WAIT).get(0) instanceof UpdateEvent u ? u.after().get("filler") : null);
      assertTrue(streamedTransactions("subxacts") >= 1);
    }
    dropSlot("subxacts");
  }

  @Test
  void aTransactionOverTheMemoryBudgetSpillsAndIsDeliveredFromDisk(@TempDir Path spill)
      throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("spilled", new MemoryCheckpointStore())
            .memoryBudget(32 * 1024)
            .spillDirectory(spill)
            .build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO spilled SELECT g, "
              + FILLER
              + " FROM generate_series(1, 3000) g; COMMIT",
          "INSERT INTO spilled VALUES (9999, 'small')");
      List<ChangeEvent> got = events.take(3000, WAIT);
      assertOneTransaction(got, 3000);
      assertEquals(range(1, 3000), ids(got));
      assertEquals("x".repeat(200), ((InsertEvent) got.get(2999)).after().get("filler"));
      assertEquals(List.of(9999), ids(events.take(1, WAIT)));
      assertEquals(1, source.metrics().transactionsSpilled());
      assertTrue(source.metrics().bytesSpilled() > 0, "the spilled changes' bytes");
      try (Stream<Path> files = Files.list(spill)) {
        assertEquals(List.of(), files.toList(), "the spill file is deleted once delivered");
      }
    }
    dropSlot("spilled");
  }

  @Test
  void streamedAndSpilledWithASubtransactionAbort(@TempDir Path spill) throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("streamspill", new MemoryCheckpointStore())
            .streaming(StreamingMode.ON)
            .memoryBudget(16 * 1024)
            .spillDirectory(spill)
            .build()) {
      source.start(events);
      pg.execute(
          "BEGIN;"
              + " INSERT INTO streamspill SELECT g, "
              + FILLER
              + " FROM generate_series(1, 1500) g;"
              + " SAVEPOINT a;"
              + " INSERT INTO streamspill SELECT g, "
              + FILLER
              + " FROM generate_series(5001, 6500) g;"
              + " ROLLBACK TO SAVEPOINT a;"
              + " INSERT INTO streamspill SELECT g, "
              + FILLER
              + " FROM generate_series(8001, 8500) g;"
              + " COMMIT");
      List<ChangeEvent> got = events.take(2000, WAIT);
      assertOneTransaction(got, 2000);
      List<Integer> expected = new ArrayList<>(range(1, 1500));
      expected.addAll(range(8001, 8500));
      assertEquals(expected, ids(got));
      assertTrue(source.metrics().transactionsSpilled() >= 1);
    }
    dropSlot("streamspill");
  }

  @Test
  void preparedTransactionsAreDeliveredAtCommitPreparedAndNeverAfterRollback() throws Exception {
    EventCollector events = new EventCollector(true);
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    try (PgCdcSource source = source("twophase", store).twoPhase(true).build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO twophase VALUES (1, 'a'), (2, 'b'); PREPARE TRANSACTION 'tp1'",
          "INSERT INTO twophase VALUES (3, 'c')");
      assertEquals(
          List.of(3), ids(events.take(1, WAIT)), "a prepared transaction waits for its commit");
      pg.execute("COMMIT PREPARED 'tp1'");
      List<ChangeEvent> committed = events.take(2, WAIT);
      assertOneTransaction(committed, 2);
      assertEquals(List.of(1, 2), ids(committed));
      pg.execute(
          "BEGIN; INSERT INTO twophase VALUES (10, 'x'); PREPARE TRANSACTION 'tp2'",
          "ROLLBACK PREPARED 'tp2'",
          "INSERT INTO twophase VALUES (11, 'y')");
      assertEquals(List.of(11), ids(events.take(1, WAIT)), "nothing of the rolled back one");
      PgLsn last = PgLsn.parse(pg.queryString("SELECT pg_current_wal_lsn()"));
      await()
          .atMost(WAIT)
          .until(
              () ->
                  !source
                          .watermark()
                          .isBefore(
                              PgLsn.parse(
                                  pg.queryString(
                                      "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'twophase'")))
                      && source.metrics().pendingTransactions() == 0);
      assertTrue(last.isAfter(PgLsn.ZERO));
    }
    dropSlot("twophase");
  }

  @Test
  void aPreparedTransactionPendingAtStopIsDeliveredAfterARestart() throws Exception {
    EventCollector before = new EventCollector(true);
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    try (PgCdcSource source = source("tprestart", store).twoPhase(true).build()) {
      source.start(before);
      pg.execute(
          "BEGIN; INSERT INTO tprestart VALUES (1, 'a'); PREPARE TRANSACTION 'tpr'",
          "INSERT INTO tprestart VALUES (2, 'b')");
      assertEquals(List.of(2), ids(before.take(1, WAIT)));
      // transaction 2 is acknowledged, but the watermark must stay before the prepared one, so
      // both stay pending
      await().atMost(WAIT).until(() -> source.metrics().eventsHandled() == 1);
      assertEquals(2, source.metrics().pendingTransactions());
    }
    pg.execute("COMMIT PREPARED 'tpr'", "INSERT INTO tprestart VALUES (3, 'c')");
    EventCollector after = new EventCollector(true);
    try (PgCdcSource source = source("tprestart", store).twoPhase(true).build()) {
      source.start(after);
      assertEquals(
          List.of(1, 3),
          ids(after.take(2, WAIT)),
          "the prepared transaction comes again; 2 does not");
    }
    dropSlot("tprestart");
  }

  @Test
  void aStreamedPreparedTransaction() throws Exception {
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        source("streamprep", new MemoryCheckpointStore())
            .streaming(StreamingMode.ON)
            .twoPhase(true)
            .build()) {
      source.start(events);
      pg.execute(
          "BEGIN; INSERT INTO streamprep SELECT g, "
              + FILLER
              + " FROM generate_series(1, 1500) g;"
              + " PREPARE TRANSACTION 'sp1'",
          "INSERT INTO streamprep VALUES (9000, 'between')");
      assertEquals(List.of(9000), ids(events.take(1, WAIT)));
      pg.execute("COMMIT PREPARED 'sp1'");
      List<ChangeEvent> got = events.take(1500, WAIT);
      assertOneTransaction(got, 1500);
      assertEquals(range(1, 1500), ids(got));
    }
    dropSlot("streamprep");
  }

  @Test
  void optionsTheChosenProtocolVersionLacksAreRefusedAtStart() throws Exception {
    try (PgCdcSource source =
        source("tooold", new MemoryCheckpointStore())
            .protocolVersion(1)
            .streaming(StreamingMode.ON)
            .build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(e.getMessage().contains("streaming on needs protocol version 2"), e.getMessage());
    }
    try (PgCdcSource source =
        source("tooold", new MemoryCheckpointStore()).protocolVersion(2).twoPhase(true).build()) {
      CdcConfigurationException e =
          assertThrows(
              CdcConfigurationException.class, () -> source.start(new EventCollector(true)));
      assertTrue(e.getMessage().contains("two_phase needs protocol version 3"), e.getMessage());
    }
  }
}
