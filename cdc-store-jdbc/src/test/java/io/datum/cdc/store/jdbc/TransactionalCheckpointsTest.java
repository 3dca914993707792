package io.datum.cdc.store.jdbc;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.AcknowledgedRun;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Acknowledging in the handler's transaction, on embedded PostgreSQL: a rollback leaves the row as
 * it was, a commit moves it, the source's own (older) writes never undo a transactional one, and a
 * restarted source resumes from the row, delivering exactly the events whose acknowledgement did
 * not commit.
 */
@EmbeddedPostgresTest
class TransactionalCheckpointsTest {

  private static final Duration WAIT = Duration.ofSeconds(30);

  private final EmbeddedPostgresServer pg;
  private final UrlDataSource dataSource;

  TransactionalCheckpointsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
    this.dataSource = new UrlDataSource(pg.jdbcUrl());
  }

  private static CdcOffset offset(String slot, String txEnd, int index, int count) {
    PgLsn end = PgLsn.parse(txEnd);
    return new CdcOffset(slot, end, end, 1, index, count);
  }

  @Test
  void rollbackLeavesTheRowAndCommitMovesIt() throws Exception {
    try (TransactionalCheckpoints checkpoints =
        JdbcCheckpointStore.builder(dataSource).table("tx_unit").open().transactional()) {
      checkpoints.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/50")));
      pg.execute("CREATE TABLE unit_sink (id int PRIMARY KEY)");
      CdcOffset first = offset("s", "0/100", 0, 2);
      CdcOffset second = offset("s", "0/100", 1, 2);
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        insert(c, "unit_sink", 1);
        checkpoints.acknowledgeIn(c, first);
        c.rollback();
      }
      assertEquals(
          Optional.of(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/50"))),
          checkpoints.load("s"),
          "after a rollback");
      assertEquals(List.of(), ids("unit_sink"));

      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        insert(c, "unit_sink", 1);
        checkpoints.acknowledgeIn(c, first);
        c.commit();
      }
      CdcCheckpoint afterFirst = checkpoints.load("s").orElseThrow();
      assertEquals(PgLsn.parse("0/50"), afterFirst.watermark());
      assertTrue(afterFirst.isAcknowledged(PgLsn.parse("0/100"), 0));
      assertFalse(afterFirst.isAcknowledged(PgLsn.parse("0/100"), 1));

      // the source's checkpoint, older than the row: merged, not replacing
      checkpoints.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/60")));
      CdcCheckpoint merged = checkpoints.load("s").orElseThrow();
      assertEquals(PgLsn.parse("0/60"), merged.watermark());
      assertTrue(merged.isAcknowledged(PgLsn.parse("0/100"), 0), "kept by the source's write");

      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        insert(c, "unit_sink", 2);
        checkpoints.acknowledgeIn(c, second);
        c.commit();
      }
      assertEquals(
          new CdcCheckpoint(
              "s",
              PgLsn.parse("0/60"),
              List.of(),
              List.of(new AcknowledgedRun(PgLsn.parse("0/100"), PgLsn.parse("0/100"))),
              null),
          checkpoints.load("s").orElseThrow(),
          "the transaction completed: a run of one");
      checkpoints.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/100")));
      assertEquals(
          Optional.of(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/100"))), checkpoints.load("s"));
      assertEquals(List.of(1, 2), ids("unit_sink"));

      try (Connection c = dataSource.getConnection()) {
        IllegalStateException e =
            assertThrows(IllegalStateException.class, () -> checkpoints.acknowledgeIn(c, first));
        assertTrue(e.getMessage().contains("setAutoCommit(false)"), e.getMessage());
      }
    }
  }

  @Test
  void aTransactionHoldsTheRowUntilItCommitsAndTheSourcesWriteKeepsIt() throws Exception {
    try (TransactionalCheckpoints checkpoints =
        JdbcCheckpointStore.builder(dataSource).table("tx_lock").open().transactional()) {
      checkpoints.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/10")));
      CompletableFuture<Void> sourceWrite;
      try (Connection c = dataSource.getConnection()) {
        c.setAutoCommit(false);
        checkpoints.acknowledgeIn(c, offset("s", "0/30", 0, 1));
        sourceWrite =
            CompletableFuture.runAsync(
                () -> checkpoints.store(CdcCheckpoint.atWatermark("s", PgLsn.parse("0/20"))));
        await()
            .atMost(WAIT)
            .until(() -> waitingOnLock("tx_lock")); // the source's write waits for the row
        assertFalse(sourceWrite.isDone());
        c.commit();
      }
      sourceWrite.get(30, TimeUnit.SECONDS);
      assertEquals(
          new CdcCheckpoint(
              "s",
              PgLsn.parse("0/20"),
              List.of(),
              List.of(new AcknowledgedRun(PgLsn.parse("0/30"), PgLsn.parse("0/30"))),
              null),
          checkpoints.load("s").orElseThrow());
    }
  }

  @Test
  void aRestartedSourceResumesFromTheRowAndDeliversOnlyWhatDidNotCommit() throws Exception {
    pg.execute(
        "CREATE TABLE resume_src (id int PRIMARY KEY)",
        "CREATE TABLE resume_sink (id int PRIMARY KEY)",
        "CREATE PUBLICATION resume FOR TABLE resume_src");
    try (TransactionalCheckpoints checkpoints =
        JdbcCheckpointStore.builder(dataSource).table("tx_resume").open().transactional()) {
      List<CdcOffset> delivered = Collections.synchronizedList(new ArrayList<>());
      AtomicReference<PgLsn> watermarkAtFailure = new AtomicReference<>();
      AtomicReference<CompletableFuture<Void>> lastAck = new AtomicReference<>();
      try (PgCdcSource source = source(checkpoints)) {
        CompletableFuture<Void> done =
            source.start(
                (event, handle) -> {
                  int id = (Integer) ((InsertEvent) event).after().get("id");
                  delivered.add(event.offset());
                  try (Connection c = dataSource.getConnection()) {
                    c.setAutoCommit(false);
                    insert(c, "resume_sink", id);
                    if (id == 3) { // fails after writing and acknowledging, before the commit
                      lastAck.get().join(); // the source knows of event 2's commit
                      watermarkAtFailure.set(handle.watermark());
                      checkpoints.acknowledgeIn(c, event.offset());
                      c.rollback();
                      throw new IllegalStateException("handler failed on 3");
                    }
                    lastAck.set(checkpoints.commit(c, handle, event.offset()));
                  }
                });
        for (int id = 1; id <= 5; id++) {
          pg.execute("INSERT INTO resume_src VALUES (" + id + ")"); // a transaction each
        }
        CompletionException e =
            assertThrows(
                CompletionException.class, () -> done.orTimeout(30, TimeUnit.SECONDS).join());
        assertTrue(String.valueOf(e.getCause()).contains("handler failed on 3"), e.toString());
      }
      assertEquals(3, delivered.size(), "delivered before the failure: " + delivered);
      PgLsn second = delivered.get(1).txEndLsn();
      PgLsn third = delivered.get(2).txEndLsn();
      assertEquals(second, watermarkAtFailure.get(), "the watermark after 2 committed");
      CdcCheckpoint row = checkpoints.load("resume").orElseThrow();
      assertTrue(row.isAcknowledged(delivered.get(0).txEndLsn(), 0));
      assertTrue(row.isAcknowledged(second, 0));
      assertFalse(row.isAcknowledged(third, 0), "3's acknowledgement was rolled back: " + row);
      PgLsn confirmed =
          PgLsn.parse(
              pg.queryString(
                  "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = 'resume'"));
      assertFalse(confirmed.compareTo(third) >= 0, "confirmed_flush_lsn " + confirmed);
      assertEquals(List.of(1, 2), ids("resume_sink"));

      List<Integer> again = Collections.synchronizedList(new ArrayList<>());
      AtomicReference<CdcOffset> lastOffset = new AtomicReference<>();
      try (PgCdcSource source = source(checkpoints)) {
        source.start(
            (event, handle) -> {
              int id = (Integer) ((InsertEvent) event).after().get("id");
              again.add(id);
              lastOffset.set(event.offset());
              try (Connection c = dataSource.getConnection()) {
                c.setAutoCommit(false);
                insert(c, "resume_sink", id);
                checkpoints.commit(c, handle, event.offset());
              }
            });
        await().atMost(WAIT).until(() -> ids("resume_sink").size() == 5);
        PgLsn fifth = lastOffset.get().txEndLsn();
        await() // the source's own writes fold the committed runs into the watermark
            .atMost(WAIT)
            .untilAsserted(
                () ->
                    assertFalse(
                        checkpoints.load("resume").orElseThrow().watermark().isBefore(fifth),
                        "row " + checkpoints.load("resume") + ", source at " + source.watermark()));
        assertEquals(List.of(), checkpoints.load("resume").orElseThrow().acknowledgedRuns());
        assertFalse(source.watermark().isBefore(fifth));
      }
      assertEquals(List.of(3, 4, 5), again, "the restarted source delivers what did not commit");
      assertEquals(List.of(1, 2, 3, 4, 5), ids("resume_sink"));
    }
  }

  private PgCdcSource source(TransactionalCheckpoints checkpoints) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot("resume")
        .publication("resume")
        .checkpointStore(checkpoints)
        .createSlot(true)
        .build();
  }

  private static void insert(Connection c, String table, int id) throws SQLException {
    try (PreparedStatement ps = c.prepareStatement("INSERT INTO " + table + " VALUES (?)")) {
      ps.setInt(1, id);
      ps.executeUpdate();
    }
  }

  private List<Integer> ids(String table) throws SQLException {
    List<Integer> ids = new ArrayList<>();
    try (Connection c = dataSource.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT id FROM " + table + " ORDER BY id")) {
      while (rs.next()) {
        ids.add(rs.getInt(1));
      }
    }
    return ids;
  }

  private boolean waitingOnLock(String table) throws SQLException {
    return "1"
        .equals(
            pg.queryString(
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'"
                    + " AND query LIKE '%"
                    + table
                    + "%FOR UPDATE%'"));
  }
}
