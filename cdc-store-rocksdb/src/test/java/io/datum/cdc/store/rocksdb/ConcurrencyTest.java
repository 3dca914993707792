package io.datum.cdc.store.rocksdb;

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

  private static final int THREADS = 16;
  private static final int ROUNDS = 50;

  @TempDir Path dir;

  @Test
  @Timeout(120)
  void concurrentStoresShareBatchesAndEndWithTheLastCheckpoints() throws Exception {
    Set<CdcCheckpoint> storedShared = ConcurrentHashMap.newKeySet();
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
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
                    assertTrue(storedShared.contains(store.load("shared").orElseThrow()));
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
      long stores = 2L * THREADS * ROUNDS;
      assertEquals(stores, store.checkpointsSubmitted());
      assertTrue(
          store.batches() < stores,
          "group commit wrote "
              + store.batches()
              + " batches for "
              + stores
              + " concurrent stores");
      System.out.printf("%d concurrent stores in %d batches%n", stores, store.batches());
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      for (int t = 0; t < THREADS; t++) {
        assertEquals(
            PgLsn.of(1_000L * (t + 1) + ROUNDS - 1),
            store.load("own_" + t).orElseThrow().watermark());
      }
    }
  }

  @Test
  void aSingleCallerPaysOneBatchPerStore() {
    try (RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir)) {
      for (int i = 1; i <= 20; i++) {
        store.store(CdcCheckpoint.atWatermark("s", PgLsn.of(i)));
      }
      assertEquals(20, store.batches());
    }
  }

  @Test
  @Timeout(60)
  void closeWaitsForStoresAndLaterStoresAndLoadsFail() throws Exception {
    RocksDbCheckpointStore store = RocksDbCheckpointStore.open(dir);
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
                      store.load(slot);
                    }
                  } catch (IllegalStateException closed) {
                    return stored;
                  }
                }));
      }
      started.await();
      Thread.sleep(50);
      store.close();
      int[] stored = new int[THREADS];
      for (int t = 0; t < THREADS; t++) {
        stored[t] = results.get(t).get();
      }
      try (RocksDbCheckpointStore reopened = RocksDbCheckpointStore.open(dir)) {
        for (int t = 0; t < THREADS; t++) {
          assertEquals(
              stored[t] == 0 ? null : PgLsn.of(stored[t]),
              reopened.load("s" + t).map(CdcCheckpoint::watermark).orElse(null));
        }
      }
    } finally {
      pool.shutdownNow();
      assertTrue(pool.awaitTermination(30, TimeUnit.SECONDS));
    }
  }
}
