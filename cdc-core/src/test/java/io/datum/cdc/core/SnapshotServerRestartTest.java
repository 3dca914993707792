package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A server restart in the middle of an online snapshot (initial, at an existing slot, small chunks)
 * while a writer updates, deletes and inserts (and goes on for 3000 writes after the restart): the
 * source reconnects, the snapshot goes on from what was acknowledged, and the events replayed into
 * a map equal the table.
 *
 * <p>The fast shutdown of the restart cannot complete: it waits until every walsender's client
 * confirmed what it was sent, and the source, whose chunk reads fail while the server shuts down,
 * does not confirm the changes streamed meanwhile. After the server's shutdown timeout (5 s here,
 * the default 30 s only made the test wait longer) it is made an immediate one, as it was with the
 * default.
 */
@EmbeddedPostgresTest(shutdownTimeoutMillis = 5_000)
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SnapshotServerRestartTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final TableId T = new TableId("public", "restarted_snap");
  private static final int ROWS = 30_000;

  @Test
  void anOnlineSnapshotSurvivesAServerRestart(EmbeddedPostgresServer pg) throws Exception {
    pg.execute(
        "CREATE TABLE restarted_snap (id int PRIMARY KEY, v int, s text)",
        "INSERT INTO restarted_snap SELECT g, 0, 's' || g FROM generate_series(1, " + ROWS + ") g",
        "ANALYZE restarted_snap",
        "CREATE PUBLICATION restarted_snap FOR TABLE restarted_snap",
        "SELECT pg_create_logical_replication_slot('restarted_snap', 'pgoutput')");
    SnapshotReplica replica = new SnapshotReplica().key(T, "id");
    AtomicBoolean stop = new AtomicBoolean();
    AtomicLong writes = new AtomicLong();
    Thread writer =
        new Thread(
            () -> {
              Random random = new Random(11);
              // fresh keys below every key read: the snapshot does not chase them
              int fresh = -100;
              Connection c = null;
              while (!stop.get()) {
                try {
                  if (c == null) {
                    c = pg.getConnection();
                  }
                  int id = 1 + random.nextInt(ROWS);
                  try (Statement st = c.createStatement()) {
                    switch (random.nextInt(4)) {
                      case 0 ->
                          st.execute("INSERT INTO restarted_snap VALUES (" + fresh-- + ", 1, 'n')");
                      case 1 -> st.execute("DELETE FROM restarted_snap WHERE id = " + id);
                      case 2 ->
                          st.execute(
                              "UPDATE restarted_snap SET id = " + fresh-- + " WHERE id = " + id);
                      default -> st.execute("UPDATE restarted_snap SET v = v + 1 WHERE id = " + id);
                    }
                  }
                  writes.incrementAndGet();
                } catch (SQLException e) {
                  // the server is restarting
                  try {
                    if (c != null) {
                      c.close();
                    }
                  } catch (SQLException closing) {
                    e.addSuppressed(closing);
                  }
                  c = null;
                  await()
                      .atMost(WAIT)
                      .ignoreExceptions()
                      .until(
                          () -> {
                            try (Connection probe = pg.getConnection()) {
                              return probe.isValid(1);
                            }
                          });
                }
              }
              try {
                if (c != null) {
                  c.close();
                }
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            },
            "writer");
    writer.setDaemon(true);
    Duration backoff = Duration.ofMillis(100);
    try (PgCdcSource s =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("restarted_snap")
            .publication("restarted_snap")
            .checkpointStore(new MemoryCheckpointStore())
            .reconnect(100, backoff, backoff.multipliedBy(10))
            .snapshot(SnapshotMode.INITIAL)
            .snapshotChunkRows(150)
            .build()) {
      CompletableFuture<Void> done = s.start(replica);
      writer.start();
      await().atMost(WAIT).until(() -> replica.reads.get() >= ROWS / 4 || done.isDone());
      assertTrue(s.snapshotInProgress(), "the snapshot is in progress at the restart");
      long readAtRestart = replica.reads.get();
      pg.restart(); // a fast shutdown and a start: every connection is cut
      long restarted = System.nanoTime();
      await().atMost(WAIT).until(() -> s.reconnects() >= 1 || done.isDone());
      long reconnected = System.nanoTime();
      // the writer goes on for a while after the restart (the snapshot reads on under its changes),
      // then stops, so that the snapshot's end does not wait for a stream flooded by it
      long target = writes.get() + 3000;
      await().atMost(WAIT).until(() -> writes.get() >= target || done.isDone());
      stop.set(true);
      writer.join();
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      long finished = System.nanoTime();
      assertFalse(done.isDone(), "the source stopped: " + done);
      pg.execute("INSERT INTO restarted_snap VALUES (-1, -1, 'sentinel')");
      await().atMost(WAIT).until(() -> replica.table(T).containsKey(List.<Object>of(-1)));
      System.out.printf(
          "online snapshot across a server restart: %d rows read before it, %d reads, %d"
              + " changes, %d writes, %d reconnects (%d ms after the restart), snapshot done %d ms"
              + " after it; chunks done %d, retried %d%n",
          readAtRestart,
          replica.reads.get(),
          replica.changes.get(),
          writes.get(),
          s.reconnects(),
          (reconnected - restarted) / 1_000_000,
          (finished - restarted) / 1_000_000,
          s.metrics().snapshotChunksDone(),
          s.metrics().snapshotChunksRetried());
      assertTrue(replica.reads.get() > readAtRestart, "rows read after the restart");
      try (Connection c = pg.getConnection()) {
        assertEquals(SnapshotReplica.content(c, T, List.of("id")), replica.sorted(T));
      }
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
      pg.execute("SELECT pg_drop_replication_slot('restarted_snap')");
    }
  }
}
