package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A handler that blocks for three times the server's wal_sender_timeout, with the hand-off full,
 * does not get the connection killed: the reading thread keeps sending status updates.
 */
@EmbeddedPostgresTest(walSenderTimeoutMillis = 2_000)
class SlowHandlerTest {

  private final EmbeddedPostgresServer pg;

  SlowHandlerTest(EmbeddedPostgresServer pg) {
    this.pg = pg;
  }

  @Test
  void aHandlerBlockedLongerThanWalSenderTimeoutKeepsTheConnection() throws Exception {
    pg.execute("CREATE TABLE slow (id int PRIMARY KEY)", "CREATE PUBLICATION slow FOR TABLE slow");
    CountDownLatch blocked = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    EventCollector events = new EventCollector(true);
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(pg.jdbcUrl())
            .user(pg.user())
            .slot("slow")
            .publication("slow")
            .checkpointStore(new MemoryCheckpointStore())
            .createSlot(true)
            .handoffCapacity(1)
            .statusInterval(Duration.ofMillis(500))
            .build()) {
      CompletableFuture<Void> done =
          source.start(
              (event, checkpoints) -> {
                if (blocked.getCount() > 0) {
                  blocked.countDown();
                  assertTrue(
                      release.await(60, TimeUnit.SECONDS), "test never released the handler");
                }
                events.handle(event, checkpoints);
              });
      pg.execute("INSERT INTO slow SELECT generate_series(1, 50)");
      assertTrue(blocked.await(30, TimeUnit.SECONDS));
      String pid =
          pg.queryString("SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'slow'");
      // three wal_sender_timeouts: the same walsender stays, the source keeps running
      await()
          .during(Duration.ofSeconds(6))
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  !done.isDone()
                      && pid.equals(
                          pg.queryString(
                              "SELECT active_pid FROM pg_replication_slots WHERE slot_name = 'slow'")));
      release.countDown();
      List<ChangeEvent> got = events.take(50, Duration.ofSeconds(30));
      for (int i = 0; i < 50; i++) {
        assertEquals(i + 1, ((InsertEvent) got.get(i)).after().get("id"));
      }
      PgLsn end = got.get(49).offset().txEndLsn();
      await()
          .atMost(Duration.ofSeconds(30))
          .until(
              () ->
                  PgLsn.parse(
                          pg.queryString(
                              "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = 'slow'"))
                      .equals(end));
    }
  }
}
