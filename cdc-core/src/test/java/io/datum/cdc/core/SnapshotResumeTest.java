package io.datum.cdc.core;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcConfigurationException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.core.config.SourceOptions;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.testkit.EmbeddedPostgresTest;
import java.sql.Connection;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A snapshot interrupted in its exported phase, with acknowledgements in and out of order, resumed
 * by a new source on the same store: the restarted source reads only the rows not acknowledged
 * (online, while a writer changes the table), never an acknowledged one, and the replayed events
 * equal the table.
 */
@EmbeddedPostgresTest
@Timeout(value = 4, unit = TimeUnit.MINUTES)
class SnapshotResumeTest {

  private static final Duration WAIT = Duration.ofSeconds(90);
  private static final TableId T = new TableId("public", "items");
  private static final int ROWS = 15000;
  private static EmbeddedPostgresServer pg;

  @BeforeAll
  static void table(EmbeddedPostgresServer server) throws Exception {
    pg = server;
    pg.execute(
        "CREATE TABLE items (id int PRIMARY KEY, v int)",
        "INSERT INTO items SELECT g, 0 FROM generate_series(1, " + ROWS + ") g",
        "ANALYZE items",
        "CREATE PUBLICATION items FOR TABLE items");
  }

  private static PgCdcSource.Builder source(MemoryCheckpointStore store) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot("items_resume")
        .publication("items")
        .checkpointStore(store)
        .snapshot(SnapshotMode.INITIAL)
        .snapshotParallelism(2)
        .snapshotChunkRows(400)
        .handoffCapacity(64);
  }

  @Test
  void aRestartReadsOnlyWhatWasNotAcknowledged() throws Exception {
    MemoryCheckpointStore store = new MemoryCheckpointStore();
    Set<Integer> acknowledged = new HashSet<>();
    SnapshotReplica replica = new SnapshotReplica().key(T, "id");
    AtomicInteger seen = new AtomicInteger();
    CountDownLatch enough = new CountDownLatch(1);
    CdcHandler first =
        new CdcHandler() {
          @Override
          public synchronized void handle(ChangeEvent event, CdcCheckpointHandle checkpoints) {
            replica.apply(event);
            int n = seen.incrementAndGet();
            int id = (Integer) ((ReadEvent) event).after().get("id");
            // the first 3000 in order, then only even keys (out of order), then nothing
            if (n <= 3000 || (n <= 5000 && id % 2 == 0)) {
              checkpoints.acknowledge(event.offset());
              acknowledged.add(id);
            }
            if (n == 5000) {
              enough.countDown();
            }
          }
        };
    try (PgCdcSource s = source(store).createSlot(true).build()) {
      s.start(first);
      assertTrue(enough.await(60, TimeUnit.SECONDS));
      s.stop();
    }
    CdcCheckpoint stored = store.load("items_resume").orElseThrow();
    assertFalse(stored.snapshot().isIdle(), "the snapshot is in progress: " + stored.snapshot());
    assertTrue(stored.snapshot().holdLsn() != null);

    // started without a snapshot mode, nothing would read the rest and the hold would keep the
    // slot for ever: the start is refused, naming the remedy, and the store is left as it was
    try (PgCdcSource s =
        source(store)
            .snapshot(SnapshotMode.NEVER)
            .snapshotParallelism(1)
            .snapshotChunkRows(SourceOptions.SNAPSHOT_CHUNK_ROWS.defaultValue())
            .build()) {
      CdcConfigurationException refused =
          assertThrows(CdcConfigurationException.class, () -> s.start((event, checkpoints) -> {}));
      assertTrue(
          refused.getMessage().contains("holds a snapshot in progress ([public.items]")
              && refused.getMessage().contains(stored.snapshot().holdLsn().toString())
              && refused.getMessage().contains("pgcdc --snapshot initial"),
          refused.getMessage());
    }
    assertEquals(stored, store.load("items_resume").orElseThrow());

    // the second run resumes online while a writer changes the table
    AtomicBoolean stop = new AtomicBoolean();
    Thread writer =
        new Thread(
            () -> {
              try (Connection c = pg.getConnection();
                  Statement st = c.createStatement()) {
                for (int i = 0; !stop.get(); i++) {
                  int id = 1 + (i * 7919) % ROWS;
                  st.execute("UPDATE items SET v = v + 1 WHERE id = " + id);
                  if (i % 10 == 0) {
                    st.execute("DELETE FROM items WHERE id = " + (1 + (i * 104729) % ROWS));
                  }
                }
              } catch (Exception e) {
                throw new IllegalStateException(e);
              }
            });
    writer.setDaemon(true);
    Set<Integer> readAgain = new HashSet<>();
    AtomicInteger duplicates = new AtomicInteger();
    CdcHandler second =
        (event, checkpoints) -> {
          synchronized (replica) {
            replica.apply(event);
            if (event instanceof ReadEvent r) {
              int id = (Integer) r.after().get("id");
              if (!readAgain.add(id)) {
                duplicates.incrementAndGet();
              }
            }
          }
          checkpoints.acknowledge(event.offset());
        };
    try (PgCdcSource s = source(store).build()) {
      CompletableFuture<Void> done = s.start(second);
      writer.start();
      await().atMost(WAIT).until(() -> !s.snapshotInProgress() || done.isDone());
      stop.set(true);
      writer.join();
      pg.execute("INSERT INTO items VALUES (-1, -1)");
      await().atMost(WAIT).until(() -> replica.table(T).containsKey(List.<Object>of(-1)));
      s.stop();
      done.get(30, TimeUnit.SECONDS);
    } finally {
      stop.set(true);
    }
    Set<Integer> both = new HashSet<>(readAgain);
    both.retainAll(acknowledged);
    assertEquals(Set.of(), both, "acknowledged rows read again");
    assertEquals(0, duplicates.get(), "rows read twice in the second run");
    assertTrue(store.load("items_resume").orElseThrow().snapshot().initialCompleted());
    try (Connection c = pg.getConnection()) {
      assertEquals(SnapshotReplica.content(c, T, List.of("id")), replica.sorted(T));
    } finally {
      pg.execute("SELECT pg_drop_replication_slot('items_resume')");
    }
  }
}
