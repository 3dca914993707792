package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The visibility hazard of LSN windows, reproduced on purpose: with {@code
 * synchronous_standby_names} naming a standby that never connects, a committing transaction writes
 * its commit record and marks clog, then waits for the standby before it becomes visible (xact.c,
 * {@code RecordTransactionCommit}). The walsender decodes and sends it meanwhile, so the stream
 * delivers its update while every query still sees the old row. An online snapshot chunk read now
 * sees the old row; deciding by LSN alone would deliver it after the update. The source must not:
 * it reads the chunk again once the transaction is visible.
 */
@EmbeddedPostgresTest
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class SnapshotVisibilityTest {

  private static final Duration WAIT = Duration.ofSeconds(60);
  private static final TableId T = new TableId("public", "accounts");

  @Test
  void aCommitInTheWalNotYetVisibleIsNeverOverwrittenByAStaleRead(EmbeddedPostgresServer pg)
      throws Exception {
    pg.execute(
        "CREATE TABLE accounts (id int PRIMARY KEY, balance int)",
        "INSERT INTO accounts SELECT g, 0 FROM generate_series(1, 100) g",
        "CREATE PUBLICATION accounts FOR TABLE accounts",
        "SELECT pg_create_logical_replication_slot('accounts', 'pgoutput')");
    SnapshotReplica replica = new SnapshotReplica().key(T, "id");
    try (PgCdcSource s =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("accounts")
            .publication("accounts")
            .checkpointStore(new MemoryCheckpointStore())
            .snapshot(SnapshotMode.ON_REQUEST)
            .build()) {
      CompletableFuture<Void> done = s.start(replica);
      pg.execute(
          "ALTER SYSTEM SET synchronous_standby_names = 'ghost_standby'",
          "SELECT pg_reload_conf()");
      // the reload is asynchronous: a session started too early commits without waiting
      await()
          .atMost(WAIT)
          .until(() -> pg.queryString("SHOW synchronous_standby_names").equals("ghost_standby"));
      // T: its commit waits for the standby after writing the commit record
      Thread committer =
          new Thread(
              () -> {
                try (Connection c = pg.getConnection();
                    Statement st = c.createStatement()) {
                  st.execute("UPDATE accounts SET balance = 500 WHERE id = 42");
                } catch (Exception e) {
                  throw new IllegalStateException(e);
                }
              });
      committer.setDaemon(true);
      committer.start();
      // the stream has T's update ...
      await()
          .atMost(WAIT)
          .until(
              () -> {
                Map<String, Object> row = replica.table(T).get(List.<Object>of(42));
                return row != null && Integer.valueOf(500).equals(row.get("balance"));
              });
      // ... which no query sees yet: committed in the WAL, not visible
      assertEquals(0, balance(pg, 42), "T is not visible yet");
      assertTrue(committer.isAlive(), "T's commit is waiting for the standby");

      s.snapshot(T);
      // chunks are read (and discarded) while T stays invisible; give them a few rounds
      await().atMost(WAIT).until(() -> s.metrics().snapshotChunksRetried() >= 2 || done.isDone());
      assertEquals(0, balance(pg, 42), "T is still not visible");
      // release T: it becomes visible; the chunk is read again and delivered
      pg.execute("ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()");
      committer.join(TimeUnit.SECONDS.toMillis(30));
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      assertEquals(500, balance(pg, 42));
      synchronized (replica) {
        List<ReadEvent> reads42 =
            replica.readEvents.stream()
                .filter(r -> Integer.valueOf(42).equals(r.after().get("id")))
                .toList();
        for (ReadEvent r : reads42) {
          assertEquals(500, r.after().get("balance"), "a read of id 42 after its update: " + r);
        }
        assertEquals(100, replica.reads.get(), "every row read once");
        assertEquals(500, replica.table(T).get(List.<Object>of(42)).get("balance"));
      }
      try (Connection c = pg.getConnection()) {
        assertEquals(SnapshotReplica.content(c, T, List.of("id")), replica.sorted(T));
      }
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      pg.execute("ALTER SYSTEM RESET synchronous_standby_names", "SELECT pg_reload_conf()");
    }
  }

  private static int balance(EmbeddedPostgresServer pg, int id) throws Exception {
    try (Connection c = pg.getConnection();
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT balance FROM accounts WHERE id = " + id)) {
      rs.next();
      return rs.getInt(1);
    }
  }
}
