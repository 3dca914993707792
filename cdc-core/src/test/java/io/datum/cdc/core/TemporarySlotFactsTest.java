package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import io.datum.cdc.testkit.EmbeddedPostgresVersions;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The PostgreSQL facts that reading a table without a key at an exact position of the stream rests
 * on (issue #25), on every supported version: a TEMPORARY logical slot created with an exported
 * snapshot ({@code CREATE_REPLICATION_SLOT n TEMPORARY LOGICAL pgoutput (SNAPSHOT 'export')}, 14:
 * {@code EXPORT_SNAPSHOT}) has a consistent point C in the WAL the main slot decodes, and its
 * snapshot sees exactly the transactions whose commit record the main stream reports before C
 * (decode.c: a commit whose record starts before the point a slot decodes from is not decoded by
 * it, and snapbuild.c builds the exported snapshot as of that point); its creation waits for the
 * transactions running when it starts; it is dropped when its connection ends; and a server whose
 * {@code max_replication_slots} are used up refuses it with SQLSTATE 53400.
 */
@EmbeddedPostgresVersions({14, 15, 16, 17, 18})
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TemporarySlotFactsTest {

  private static final Duration WAIT = Duration.ofSeconds(60);

  private final EmbeddedPostgresServer pg;

  TemporarySlotFactsTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  /** The temporary slot's command, as the server's version spells it. */
  private String createTemporary(String name) {
    return "CREATE_REPLICATION_SLOT "
        + name
        + " TEMPORARY LOGICAL pgoutput"
        + (pg.majorVersion() >= 15 ? " (SNAPSHOT 'export')" : " EXPORT_SNAPSHOT");
  }

  @Test
  void theExportedSnapshotSeesExactlyTheCommitsTheStreamReportsBeforeTheConsistentPoint()
      throws Exception {
    pg.execute(
        "CREATE TABLE facts_nokey (id int, v text)",
        "CREATE PUBLICATION facts_pub FOR TABLE facts_nokey");
    Map<Integer, PgLsn> commits = new ConcurrentHashMap<>();
    AtomicBoolean writing = new AtomicBoolean(true);
    AtomicReference<Throwable> writerFailure = new AtomicReference<>();
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("facts_main")
            .publication("facts_pub")
            .createSlot(true)
            .checkpointStore(new MemoryCheckpointStore())
            .build()) {
      CompletableFuture<Void> done =
          source.start(
              (event, checkpoints) -> {
                if (event instanceof InsertEvent i) {
                  commits.put((Integer) i.after().get("id"), i.offset().commitLsn());
                }
                checkpoints.acknowledge(event.offset());
              });
      // one row per transaction, as fast as one connection commits, across the slot's creation
      Thread writer =
          new Thread(
              () -> {
                try (Connection c = pg.getConnection();
                    Statement st = c.createStatement()) {
                  for (int id = 1; writing.get(); id++) {
                    st.execute("INSERT INTO facts_nokey VALUES (" + id + ", 'v')");
                  }
                } catch (Throwable t) {
                  writerFailure.set(t);
                }
              },
              "facts-writer");
      writer.start();
      await().atMost(WAIT).until(() -> commits.size() >= 300 || done.isDone());
      PgLsn consistentPoint;
      Set<Integer> seen = new HashSet<>();
      try (Connection replication =
              pg.getReplicationConnection(EmbeddedPostgresServer.DEFAULT_DATABASE);
          Statement st = replication.createStatement();
          ResultSet rs = st.executeQuery(createTemporary("facts_tmp"))) {
        assertTrue(rs.next());
        consistentPoint = PgLsn.parse(rs.getString("consistent_point"));
        String snapshot = rs.getString("snapshot_name");
        try (Connection reader = pg.getConnection();
            Statement rst = reader.createStatement()) {
          reader.setAutoCommit(false);
          rst.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY");
          rst.execute("SET TRANSACTION SNAPSHOT '" + snapshot + "'");
          try (ResultSet rows = rst.executeQuery("SELECT id FROM facts_nokey")) {
            while (rows.next()) {
              seen.add(rows.getInt(1));
            }
          }
          reader.commit();
        }
        assertEquals(
            "true",
            pg.queryString(
                "SELECT temporary::text FROM pg_replication_slots WHERE slot_name = 'facts_tmp'"));
      }
      // dropped with its connection
      await()
          .atMost(WAIT)
          .until(
              () ->
                  pg.queryString(
                          "SELECT count(*)::text FROM pg_replication_slots"
                              + " WHERE slot_name = 'facts_tmp'")
                      .equals("0"));
      int atCreation = seen.size();
      await().atMost(WAIT).until(() -> commits.size() >= atCreation + 300 || done.isDone());
      writing.set(false);
      writer.join(WAIT.toMillis());
      assertFalse(writer.isAlive(), "the writer did not stop");
      if (writerFailure.get() != null) {
        throw new AssertionError("the writer failed", writerFailure.get());
      }
      pg.execute("INSERT INTO facts_nokey VALUES (-1, 'sentinel')");
      await().atMost(WAIT).until(() -> commits.containsKey(-1) || done.isDone());
      assertFalse(done.isDone(), "the source stopped: " + done);
      int before = 0;
      int after = 0;
      for (var e : commits.entrySet()) {
        if (e.getKey() < 0) {
          continue;
        }
        boolean beforePoint = e.getValue().compareTo(consistentPoint) < 0;
        assertEquals(
            beforePoint,
            seen.contains(e.getKey()),
            "row "
                + e.getKey()
                + " committed at "
                + e.getValue()
                + ", consistent point "
                + consistentPoint
                + ", PostgreSQL "
                + pg.majorVersion());
        if (beforePoint) {
          before++;
        } else {
          after++;
        }
      }
      assertEquals(before, seen.size(), "every row the snapshot saw was streamed");
      assertTrue(before >= 300 && after >= 300, before + " before, " + after + " after");
    }
  }

  @Test
  void creationWaitsForARunningTransaction() throws Exception {
    pg.execute("CREATE TABLE facts_wait (id int)");
    try (Connection open = pg.getConnection();
        Statement ost = open.createStatement()) {
      open.setAutoCommit(false);
      ost.execute("INSERT INTO facts_wait VALUES (1)"); // has an xid now
      CompletableFuture<String> created =
          CompletableFuture.supplyAsync(
              () -> {
                try (Connection replication =
                        pg.getReplicationConnection(EmbeddedPostgresServer.DEFAULT_DATABASE);
                    Statement st = replication.createStatement();
                    ResultSet rs = st.executeQuery(createTemporary("facts_wait_tmp"))) {
                  rs.next();
                  return rs.getString("consistent_point");
                } catch (SQLException e) {
                  throw new IllegalStateException(e);
                }
              });
      // the walsender waits on the open transaction's xid lock (snapbuild.c, SnapBuildWaitSnapshot)
      await()
          .atMost(WAIT)
          .until(
              () ->
                  pg.queryString(
                          "SELECT count(*)::text FROM pg_stat_activity WHERE backend_type ="
                              + " 'walsender' AND wait_event = 'transactionid'")
                      .equals("1"));
      assertFalse(created.isDone(), "the slot was created while a transaction ran");
      open.commit();
      PgLsn point = PgLsn.parse(created.get(WAIT.toSeconds(), TimeUnit.SECONDS));
      assertTrue(point.asLong() > 0);
    }
  }

  @Test
  void aServerWithoutAFreeSlotRefusesWith53400() throws Exception {
    int max = Integer.parseInt(pg.queryString("SHOW max_replication_slots"));
    try (Connection filler = pg.getConnection();
        Statement st = filler.createStatement()) {
      int used =
          Integer.parseInt(pg.queryString("SELECT count(*)::text FROM pg_replication_slots"));
      for (int i = used; i < max; i++) {
        // temporary slots of this session: dropped when it ends
        st.execute(
            "SELECT pg_create_logical_replication_slot('facts_fill_" + i + "', 'pgoutput', true)");
      }
      SQLException refused =
          assertThrows(
              SQLException.class,
              () -> {
                try (Connection replication =
                        pg.getReplicationConnection(EmbeddedPostgresServer.DEFAULT_DATABASE);
                    Statement rst = replication.createStatement()) {
                  rst.executeQuery(createTemporary("facts_full_tmp")).close();
                }
              });
      assertEquals("53400", refused.getSQLState(), refused.getMessage());
    }
    await()
        .atMost(WAIT)
        .until(
            () ->
                pg.queryString(
                        "SELECT count(*)::text FROM pg_replication_slots"
                            + " WHERE slot_name LIKE 'facts_fill_%'")
                    .equals("0"));
  }
}
