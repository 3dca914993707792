package io.datum.cdc.store.mapdb;

import static io.datum.cdc.store.mapdb.Checkpoints.numbered;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.Timeout.ThreadMode;
import org.junit.jupiter.api.io.TempDir;

/** Concurrent stores share commits; loads never see a torn or older value. */
@Timeout(value = 120, threadMode = ThreadMode.SEPARATE_THREAD)
class ConcurrencyTest {

  private static final int THREADS = 16;
  private static final int STORES_PER_THREAD = 100;

  @TempDir Path dir;

  @Test
  void sixteenThreadsShareCommitsAndLoseNothing() throws Exception {
    Path file = dir.resolve("cdc.mapdb");
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file)) {
      ExecutorService pool = Executors.newFixedThreadPool(THREADS + 1);
      CountDownLatch start = new CountDownLatch(1);
      AtomicBoolean done = new AtomicBoolean();
      try {
        List<Future<?>> writers = new ArrayList<>();
        for (int t = 0; t < THREADS; t++) {
          String slot = "slot_" + t;
          writers.add(
              pool.submit(
                  () -> {
                    start.await();
                    for (long n = 1; n <= STORES_PER_THREAD; n++) {
                      store.store(numbered(slot, n));
                      // what this thread stored is visible at once
                      assertEquals(Optional.of(numbered(slot, n)), store.load(slot));
                    }
                    return null;
                  }));
        }
        Future<?> reader =
            pool.submit(
                () -> {
                  start.await();
                  long[] seen = new long[THREADS];
                  while (!done.get()) {
                    for (int t = 0; t < THREADS; t++) {
                      Optional<CdcCheckpoint> c = store.load("slot_" + t);
                      if (c.isPresent()) {
                        long n = c.get().watermark().asLong();
                        assertEquals(numbered("slot_" + t, n), c.get(), "torn value");
                        assertTrue(n >= seen[t], "went back from " + seen[t] + " to " + n);
                        seen[t] = n;
                      }
                    }
                  }
                  return null;
                });
        start.countDown();
        for (Future<?> writer : writers) {
          writer.get();
        }
        done.set(true);
        reader.get();
      } finally {
        pool.shutdownNow();
      }
      long stores = (long) THREADS * STORES_PER_THREAD;
      long batches = store.groupCommit().batches();
      assertEquals(stores, store.groupCommit().checkpoints());
      assertTrue(
          batches < stores, batches + " batches for " + stores + " stores: no commit was shared");
      assertTrue(store.volume().commits() <= batches, "a batch commits at most once");
      System.out.printf("%d stores by %d threads in %d batches%n", stores, THREADS, batches);
    }
    try (MapDbCheckpointStore store = MapDbCheckpointStore.open(file)) {
      for (int t = 0; t < THREADS; t++) {
        assertEquals(
            Optional.of(numbered("slot_" + t, STORES_PER_THREAD)), store.load("slot_" + t));
      }
    }
  }

  @Test
  void closeWaitsForStoresInFlightAndLaterStoresAreRefused() throws Exception {
    Path file = dir.resolve("cdc.mapdb");
    MapDbCheckpointStore store = MapDbCheckpointStore.open(file);
    ExecutorService pool = Executors.newFixedThreadPool(4);
    long[] last = new long[4];
    try {
      List<Future<?>> writers = new ArrayList<>();
      for (int t = 0; t < 4; t++) {
        int thread = t;
        writers.add(
            pool.submit(
                () -> {
                  for (long n = 1; ; n++) {
                    try {
                      store.store(numbered("closing_" + thread, n));
                      last[thread] = n;
                    } catch (IllegalStateException closed) {
                      return null;
                    }
                  }
                }));
      }
      Thread.sleep(300);
      store.close();
      for (Future<?> writer : writers) {
        writer.get();
      }
    } finally {
      pool.shutdownNow();
    }
    try (MapDbCheckpointStore reopened = MapDbCheckpointStore.open(file)) {
      for (int t = 0; t < 4; t++) {
        assertEquals(Optional.of(numbered("closing_" + t, last[t])), reopened.load("closing_" + t));
      }
    }
  }
}
