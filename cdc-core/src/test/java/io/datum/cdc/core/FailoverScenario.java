package io.datum.cdc.core;

import static java.nio.charset.StandardCharsets.UTF_8;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.PgLsn;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import java.nio.channels.Channels;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A failover with a failover slot, on PostgreSQL 17: a primary and a physical standby that
 * synchronizes the slot ({@code sync_replication_slots = on}, {@code synchronized_standby_slots} on
 * the primary); the source, given both hosts with {@code targetServerType=primary} and a {@code
 * file:} store, streams and acknowledges; the primary stops ({@link #shutdown()}: a crash or a
 * planned switchover), the source notices and is refused by the standby (not a primary yet), and
 * the standby is promoted; the source reconnects to the new primary, passes the timeline check
 * (timeline 1 continued by 2) and resumes: every row inserted before and after arrives, and none
 * whose acknowledgement was stored arrives again. Each subclass is one primary/standby pair.
 *
 * <p>Three phases: A (rows 1-50) is acknowledged and its confirmation synchronized to the standby
 * ({@code pg_replication_slots.synced}, {@code confirmed_flush_lsn} at the stored watermark); B
 * (51-100) is acknowledged but the standby's copy of the slot may still be behind it, so the new
 * primary may send B again and the source must skip it; C (101-150) is inserted on the new primary.
 */
abstract class FailoverScenario {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final String SLOT = "failover_slot";

  private final EmbeddedPostgresServer primary;
  private EmbeddedPostgresServer standby;

  FailoverScenario(EmbeddedPostgresServer primary) {
    this.primary = primary;
  }

  /**
   * How the primary stops.
   *
   * @return {@code IMMEDIATE} for a crash, {@code FAST} for a planned switchover
   */
  abstract EmbeddedPostgresServer.ShutdownMode shutdown();

  /**
   * Records every delivery, acknowledges it (durably: EVENT) and then records the acknowledgement.
   */
  private static final class Ledger implements CdcHandler {
    private final List<Integer> delivered = new ArrayList<>();
    private final List<Integer> acknowledged = new ArrayList<>();
    private final Map<Integer, Integer> againAfterAcknowledged = new HashMap<>();

    @Override
    public synchronized void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
      int id = (Integer) ((InsertEvent) event).after().get("id");
      if (acknowledged.contains(id)) {
        againAfterAcknowledged.merge(id, 1, Integer::sum);
      }
      delivered.add(id);
      checkpoints.acknowledge(event.offset());
      acknowledged.add(id);
    }

    synchronized int acknowledgedCount() {
      return acknowledged.size();
    }

    synchronized List<Integer> delivered() {
      return List.copyOf(delivered);
    }

    synchronized Map<Integer, Integer> againAfterAcknowledged() {
      return Map.copyOf(againAfterAcknowledged);
    }
  }

  private void insert(EmbeddedPostgresServer server, int from, int to) throws Exception {
    // transactions of 5 rows
    for (int first = from; first <= to; first += 5) {
      int last = Math.min(to, first + 4);
      server.execute(
          "INSERT INTO fo SELECT g, 'row ' || g FROM generate_series("
              + first
              + ", "
              + last
              + ") g");
    }
  }

  /** Whether the standby's log shows a connection of the source since the given offset. */
  private boolean sourceTriedStandby(long logOffset) throws Exception {
    try (var channel = Files.newByteChannel(standby.logFile())) {
      channel.position(logOffset);
      String tail = new String(Channels.newInputStream(channel).readAllBytes(), UTF_8);
      return tail.contains("application_name=datum-cdc " + SLOT);
    }
  }

  @Test
  void theSourceResumesOnThePromotedStandbyWithoutLossOrRepeat(@TempDir Path dir) throws Exception {
    try (EmbeddedPostgresServer made = primary.createStandby("standby1")) {
      standby = made;
      failOver(dir);
    }
  }

  private void failOver(Path dir) throws Exception {
    primary.execute(
        "CREATE TABLE fo (id int PRIMARY KEY, v text)", "CREATE PUBLICATION fo FOR TABLE fo");
    String url =
        "jdbc:postgresql://localhost:"
            + primary.port()
            + ",localhost:"
            + standby.port()
            + "/postgres?targetServerType=primary";
    Ledger ledger = new Ledger();
    try (FileCheckpointStore store = FileCheckpointStore.open(dir);
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(url)
                .user(primary.user())
                .slot(SLOT)
                .publication("fo")
                .checkpointStore(store)
                .createSlot(true)
                .failoverSlot(true)
                .reconnect(Integer.MAX_VALUE, Duration.ofMillis(100), Duration.ofSeconds(1))
                .build()) {
      CompletableFuture<Void> done = source.start(ledger);
      assertEquals(
          "t",
          primary.queryString(
              "SELECT failover FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'"));

      insert(primary, 1, 50); // A
      await().atMost(WAIT).until(() -> ledger.acknowledgedCount() == 50);
      PgLsn watermarkA = store.load(SLOT).orElseThrow().watermark();
      assertEquals(1, store.load(SLOT).orElseThrow().cluster().timeline());
      long syncStarted = System.nanoTime();
      await()
          .atMost(WAIT)
          .pollInterval(Duration.ofMillis(200))
          .until(
              () -> {
                standby.hurrySlotSync(); // else the sync worker may nap for up to 30 s
                return "t"
                    .equals(
                        standby.queryString(
                            "SELECT coalesce((SELECT synced AND NOT temporary"
                                + " AND confirmed_flush_lsn >= '"
                                + watermarkA
                                + "'::pg_lsn FROM pg_replication_slots WHERE slot_name = '"
                                + SLOT
                                + "'), false)"));
              });
      long syncMillis = (System.nanoTime() - syncStarted) / 1_000_000;

      insert(primary, 51, 100); // B: acknowledged, its confirmation perhaps not synchronized
      await().atMost(WAIT).until(() -> ledger.acknowledgedCount() == 100);
      PgLsn watermarkB = store.load(SLOT).orElseThrow().watermark();
      String standbyConfirmed =
          standby.queryString(
              "SELECT confirmed_flush_lsn FROM pg_replication_slots WHERE slot_name = '"
                  + SLOT
                  + "'");

      long standbyLogBefore = Files.size(standby.logFile());
      long crashed = System.nanoTime();
      primary.stop(shutdown());
      // as in a real failover, the source notices the loss and tries the standby (which pgjdbc
      // refuses as not a primary) before the promotion
      await().atMost(WAIT).until(() -> sourceTriedStandby(standbyLogBefore));
      long triedStandby = System.nanoTime();
      standby.promote();
      long promoted = System.nanoTime();
      await().atMost(WAIT).until(() -> source.reconnects() >= 1);
      long reconnected = System.nanoTime();

      insert(standby, 101, 150); // C, on the new primary
      await().atMost(WAIT).until(() -> ledger.acknowledgedCount() >= 150);
      long resumed = System.nanoTime();
      assertFalse(done.isDone(), "the source still runs");

      List<Integer> delivered = ledger.delivered();
      assertEquals(
          IntStream.rangeClosed(1, 150).boxed().toList(),
          delivered.stream().sorted().toList(),
          "every row exactly once, in order of delivery: " + delivered);
      assertEquals(Map.of(), ledger.againAfterAcknowledged(), "no acknowledged row again");
      CdcCheckpoint last = store.load(SLOT).orElseThrow();
      assertEquals(2, last.cluster().timeline(), "checkpoints name the new timeline");
      assertTrue(last.watermark().isAfter(watermarkB));
      assertEquals(
          "t",
          standby.queryString(
              "SELECT active FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'"));
      System.out.printf(
          "failover after a %s shutdown: slot synchronized %d ms after A was acknowledged; when the primary stopped the standby's"
              + " copy confirmed %s, the stored watermark was %s; the source tried the standby %d"
              + " ms after the stop; promotion %d ms; reconnected %d ms after the promotion (%d"
              + " ms after the stop); C delivered %d ms after the reconnect%n",
          shutdown(),
          syncMillis,
          standbyConfirmed,
          watermarkB,
          (triedStandby - crashed) / 1_000_000,
          (promoted - triedStandby) / 1_000_000,
          (reconnected - promoted) / 1_000_000,
          (reconnected - crashed) / 1_000_000,
          (resumed - reconnected) / 1_000_000);
    }
  }
}
