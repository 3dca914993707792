package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An online snapshot asked for while streaming, under concurrent changes to the same keys (a few
 * hot keys updated all the time, TOASTed values they leave unchanged, deletes and re-inserts), in
 * small chunks: the replayed events equal the table, TOASTed values included; a second request for
 * the table while it is in progress is refused.
 */
@EmbeddedPostgresTest
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class OnlineSnapshotTest {

  private static final Duration WAIT = Duration.ofSeconds(90);

  /**
   * With 1 handler thread and with 8 ({@code handlerThreads(8)}, KEY ordering): every read row and
   * every later change of its row stay in order on the threads, so the replica still equals the
   * table.
   */
  @ParameterizedTest(name = "{0} handler thread(s)")
  @ValueSource(ints = {1, 8})
  void hotKeysAndToastedValuesUnderAnOnlineSnapshot(int threads, EmbeddedPostgresServer pg)
      throws Exception {
    String docs = "docs" + threads;
    String nokey = "nokey" + threads;
    TableId docsTable = new TableId("public", docs);
    pg.execute(
        "CREATE TABLE " + docs + " (id int PRIMARY KEY, hot int, body text)",
        "CREATE TABLE " + nokey + " (v int)",
        // about 8 kB of incompressible text per row: stored out of line (TOAST)
        "INSERT INTO "
            + docs
            + " SELECT g, 0, (SELECT string_agg(md5(g::text || '-' || i), '')"
            + " FROM generate_series(1, 250) i) FROM generate_series(1, 1500) g",
        "CREATE PUBLICATION " + docs + " FOR TABLE " + docs + ", " + nokey,
        "SELECT pg_create_logical_replication_slot('" + docs + "', 'pgoutput')");
    SnapshotReplica replica = new SnapshotReplica().key(docsTable, "id");
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              Random random = new Random(7);
              try (Connection c = pg.getConnection();
                  Statement st = c.createStatement()) {
                for (int n = 0; !stop.get(); n++) {
                  int hot = 1 + random.nextInt(40);
                  st.execute("UPDATE " + docs + " SET hot = hot + 1 WHERE id = " + hot);
                  if (n % 7 == 0) {
                    int id = 1 + random.nextInt(1500);
                    st.execute("DELETE FROM " + docs + " WHERE id = " + id);
                    st.execute(
                        "INSERT INTO "
                            + docs
                            + " VALUES ("
                            + id
                            + ", -1, repeat('x', 3000))"
                            + " ON CONFLICT DO NOTHING");
                  }
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    writer.setDaemon(true);
    try (PgCdcSource s =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot(docs)
            .publication(docs)
            .handlerThreads(threads)
            .checkpointStore(new MemoryCheckpointStore())
            .snapshot(SnapshotMode.ON_REQUEST)
            .snapshotChunkRows(60)
            .build()) {
      CompletableFuture<Void> done = s.start(replica);
      writer.start();
      String id = s.snapshot(docsTable);
      assertTrue(id.startsWith("request-"), id);
      CdcConfigurationException twice =
          assertThrows(CdcConfigurationException.class, () -> s.snapshot(docsTable));
      assertTrue(twice.getMessage().contains("in progress already"), twice.getMessage());
      // a table without a key is taken too (read whole after a reset: KeylessSnapshotTest)
      assertTrue(s.snapshot(new TableId("public", nokey)).startsWith("request-"));
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      stop.set(true);
      writer.join();
      pg.execute("INSERT INTO " + docs + " VALUES (-1, -1, 'sentinel')");
      await().atMost(WAIT).until(() -> replica.table(docsTable).containsKey(List.<Object>of(-1)));
      try (Connection c = pg.getConnection()) {
        assertEquals(
            SnapshotReplica.content(c, docsTable, List.of("id")), replica.sorted(docsTable));
      }
      assertTrue(replica.changes.get() > 100, "changes during the snapshot: " + replica.changes);
      assertEquals(s.metrics().snapshotRowsRead(), replica.reads.get());
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
    }
  }

  @Test
  void aRequestForATableAnotherSessionLocksGivesUpNamingTheHolder(EmbeddedPostgresServer pg)
      throws Exception {
    pg.execute(
        "CREATE TABLE locked_t (id int PRIMARY KEY)",
        "INSERT INTO locked_t SELECT generate_series(1, 10)",
        "CREATE PUBLICATION locked_pub FOR TABLE locked_t",
        "SELECT pg_create_logical_replication_slot('locked_slot', 'pgoutput')");
    TableId locked = new TableId("public", "locked_t");
    EventCollector events = new EventCollector(true);
    try (PgCdcSource s =
            PgCdcSource.builder()
                .jdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot("locked_slot")
                .publication("locked_pub")
                .checkpointStore(new MemoryCheckpointStore())
                .snapshot(SnapshotMode.ON_REQUEST)
                .build();
        Connection holder = pg.getConnection()) {
      s.start(events);
      holder.setAutoCommit(false);
      try (Statement st = holder.createStatement()) {
        st.execute("LOCK TABLE locked_t IN ACCESS EXCLUSIVE MODE");
      }
      io.datum.cdc.CdcException refused =
          assertThrows(io.datum.cdc.CdcException.class, () -> s.snapshot(locked));
      assertTrue(
          refused.getMessage().contains("another session holds a lock on it")
              && refused.getMessage().contains("AccessExclusiveLock"),
          refused.getMessage());
      assertTrue(!s.snapshotInProgress(), "nothing was requested");
      holder.rollback();
      s.snapshot(locked);
      assertEquals(10, events.take(10, WAIT).size());
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('locked_slot')");
    }
  }

  @Test
  void aChunkWaitingForALockSaysWhichSessionHoldsIt(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE waits_t (id int PRIMARY KEY)",
        "INSERT INTO waits_t SELECT generate_series(1, 200000)",
        "CREATE PUBLICATION waits_pub FOR TABLE waits_t",
        "SELECT pg_create_logical_replication_slot('waits_slot', 'pgoutput')");
    java.util.concurrent.atomic.AtomicInteger reads =
        new java.util.concurrent.atomic.AtomicInteger();
    try (Connection holder = pg.getConnection();
        PgCdcSource s =
            PgCdcSource.builder()
                .jdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot("waits_slot")
                .publication("waits_pub")
                .checkpointStore(new MemoryCheckpointStore())
                .snapshot(SnapshotMode.INITIAL)
                .snapshotChunkRows(1000)
                .build()) {
      s.start(
          (event, handle) -> {
            reads.incrementAndGet();
            handle.acknowledge(event.offset());
          });
      await().atMost(WAIT).until(() -> reads.get() >= 1000);
      holder.setAutoCommit(false);
      try (Statement st = holder.createStatement()) {
        // granted between two chunks (each reads in a transaction of its own)
        st.execute("LOCK TABLE waits_t IN ACCESS EXCLUSIVE MODE");
      }
      String waiting =
          await()
              .atMost(WAIT)
              .until(() -> s.metrics().snapshotWaiting(), w -> w != null && w.contains("lock"));
      assertTrue(
          waiting.startsWith("a lock on public.waits_t that another session holds (pid ")
              && waiting.contains("AccessExclusiveLock"),
          waiting);
      holder.rollback();
      await().atMost(WAIT).until(() -> reads.get() == 200000 && !s.snapshotInProgress());
      assertEquals(null, s.metrics().snapshotWaiting());
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('waits_slot')");
    }
  }
}
