package io.datum.cdc.store.file;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

class ConcurrencyTest {

  private static final int THREADS = 8;
  private static final int ROUNDS = 40;

  @TempDir Path dir;

  @Test
  @Timeout(120)
  void concurrentStoresToSameAndDifferentSlotsEndWithAStoredValue() throws Exception {
    Set<CdcCheckpoint> storedShared = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (FileCheckpointStore store = FileCheckpointStore.open(dir)) {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<CdcCheckpoint>> lastOwn = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        lastOwn.add(
            pool.submit(
                () -> {
                  start.await();
                  CdcCheckpoint own = null;
                  for (int round = 0; round < ROUNDS; round++) {
                    long lsn = 1_000L * (thread + 1) + round;
                    CdcCheckpoint shared =
                        Checkpoints.checkpoint(
                            "shared",
                            PgLsn.of(lsn).toString(),
                            Checkpoints.tx(PgLsn.of(lsn + 500).toString(), thread + 1, thread));
                    storedShared.add(shared);
                    store.store(shared);
                    own = CdcCheckpoint.atWatermark("own_" + thread, PgLsn.of(lsn));
                    store.store(own);
                    store.load("shared").orElseThrow(); // readers never see a partial file
                  }
                  return own;
                }));
      }
      start.countDown();
      for (int t = 0; t < THREADS; t++) {
        assertEquals(lastOwn.get(t).get(), store.load("own_" + t).orElseThrow());
      }
      CdcCheckpoint shared = store.load("shared").orElseThrow();
      assertTrue(storedShared.contains(shared), "loaded a checkpoint nobody stored: " + shared);
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
    assertEquals(
        THREADS + 2,
        Checkpoints.entries(dir).size(),
        "no temp files left: " + Checkpoints.entries(dir));
  }

  @Test
  @Timeout(60)
  void closeWaitsForStoresAndLaterStoresFail() throws Exception {
    FileCheckpointStore store = FileCheckpointStore.open(dir);
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      CountDownLatch started = new CountDownLatch(THREADS);
      List<Future<Integer>> results = new ArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        String slot = "s" + t;
        results.add(
            pool.submit(
                () -> {
                  started.countDown();
                  int stored = 0;
                  try {
                    for (long lsn = 1; ; lsn++) {
                      store.store(CdcCheckpoint.atWatermark(slot, PgLsn.of(lsn)));
                      stored++;
                    }
                  } catch (IllegalStateException closed) {
                    return stored;
                  }
                }));
      }
      started.await();
      store.close();
      for (int t = 0; t < THREADS; t++) {
        int stored = results.get(t).get();
        assertEquals(
            stored == 0 ? null : PgLsn.of(stored),
            store.load("s" + t).map(CdcCheckpoint::watermark).orElse(null));
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
  }

  @Test
  @Timeout(60)
  void concurrentStoresAreGroupCommitted() throws Exception {
    int threads = 16;
    int perThread = 50;
    try (FileCheckpointStore store = FileCheckpointStore.open(dir.resolve("group"))) {
      ExecutorService pool = Executors.newFixedThreadPool(threads);
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> futures = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(
            pool.submit(
                () -> {
                  start.await();
                  for (int i = 1; i <= perThread; i++) {
                    store.store(CdcCheckpoint.atWatermark("t" + thread, PgLsn.of(i)));
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : futures) {
        f.get();
      }
      pool.shutdown();
      for (int t = 0; t < threads; t++) {
        assertEquals(PgLsn.of(perThread), store.load("t" + t).orElseThrow().watermark());
      }
      long batches = store.batches();
      assertTrue(
          batches < threads * perThread,
          batches + " batches for " + threads * perThread + " concurrent stores: no group commit");
    }
  }
}
