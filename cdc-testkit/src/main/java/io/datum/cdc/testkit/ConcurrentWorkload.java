package io.datum.cdc.testkit;

import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.checkpoint;
import static io.datum.cdc.testkit.internal.CheckpointStoreWriter.isWellFormed;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcStoreException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

/**
 * The kit's concurrency workloads. Thread {@code t} stores, in its iteration {@code i}, {@link
 * io.datum.cdc.testkit.internal.CheckpointStoreWriter#checkpoint checkpoint(slot, n)} with {@code n
 * = (i + 1) * THREADS + t}: strictly increasing per thread, unique, and naming its writer. Even
 * iterations go to the thread's own slot, odd ones to the shared slots in turn.
 */
final class ConcurrentWorkload {

  static final int THREADS = 16;
  static final int STORES_PER_THREAD = 200;
  static final int SHARED_SLOTS = 4;
  static final int READERS = 2;

  private final CdcCheckpointStore store;
  private final AtomicBoolean writing = new AtomicBoolean(true);

  /** Set by the first thread that fails, so the others stop early and its failure is reported. */
  private final AtomicBoolean failed = new AtomicBoolean();

  ConcurrentWorkload(CdcCheckpointStore store) {
    this.store = store;
  }

  static String ownSlot(int thread) {
    return "own_" + thread;
  }

  static String sharedSlot(int index) {
    return "shared_" + index;
  }

  static String slotOf(int thread, int iteration) {
    return iteration % 2 == 0 ? ownSlot(thread) : sharedSlot((iteration / 2) % SHARED_SLOTS);
  }

  static long valueOf(int thread, int iteration) {
    return (long) (iteration + 1) * THREADS + thread;
  }

  /** Runs writers and readers, then checks the final value of every slot. */
  void run() throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(THREADS + READERS);
    CountDownLatch start = new CountDownLatch(1);
    List<Future<?>> writers = new ArrayList<>();
    List<Future<?>> readers = new ArrayList<>();
    try {
      for (int t = 0; t < THREADS; t++) {
        int thread = t;
        writers.add(
            pool.submit(
                failFast(
                    () -> {
                      start.await();
                      for (int i = 0; i < STORES_PER_THREAD && !failed.get(); i++) {
                        store.store(checkpoint(slotOf(thread, i), valueOf(thread, i)));
                      }
                      return null;
                    })));
      }
      for (int r = 0; r < READERS; r++) {
        readers.add(pool.submit(failFast(read(start))));
      }
      start.countDown();
      for (Future<?> writer : writers) {
        try {
          writer.get();
        } catch (ExecutionException e) {
          // reported below, after the readers' failures, which tell more
        }
      }
      writing.set(false);
      await(readers, "reader");
      await(writers, "writer");
    } finally {
      writing.set(false);
      pool.shutdownNow();
      pool.awaitTermination(30, TimeUnit.SECONDS);
    }
    for (int t = 0; t < THREADS; t++) {
      int lastOwn = STORES_PER_THREAD % 2 == 0 ? STORES_PER_THREAD - 2 : STORES_PER_THREAD - 1;
      assertEquals(
          Optional.of(checkpoint(ownSlot(t), valueOf(t, lastOwn))),
          store.load(ownSlot(t)),
          "own slot of thread " + t + " must hold its last store");
    }
    for (int s = 0; s < SHARED_SLOTS; s++) {
      String slot = sharedSlot(s);
      int lastIteration =
          IntStream.range(0, STORES_PER_THREAD)
              .filter(i -> slotOf(0, i).equals(slot))
              .max()
              .orElseThrow();
      Set<CdcCheckpoint> lastOfEachThread =
          IntStream.range(0, THREADS)
              .mapToObj(t -> checkpoint(slot, valueOf(t, lastIteration)))
              .collect(Collectors.toSet());
      CdcCheckpoint loaded =
          store.load(slot).orElseThrow(() -> new AssertionError(slot + " is empty"));
      assertTrue(
          lastOfEachThread.contains(loaded),
          slot + " must hold the last store of one of the threads, holds " + loaded);
    }
  }

  private Callable<Void> failFast(Callable<Void> task) {
    return () -> {
      try {
        return task.call();
      } catch (Throwable t) {
        failed.set(true);
        throw t;
      }
    };
  }

  /** A reader: loads every slot until the writers are done; values are whole and never go back. */
  private Callable<Void> read(CountDownLatch start) {
    return () -> {
      start.await();
      long[] seenOwn = new long[THREADS];
      do {
        for (int s = 0; s < SHARED_SLOTS; s++) {
          check(sharedSlot(s), store.load(sharedSlot(s)));
        }
        for (int t = 0; t < THREADS; t++) {
          Optional<CdcCheckpoint> loaded = store.load(ownSlot(t));
          check(ownSlot(t), loaded);
          if (loaded.isPresent()) {
            long n = loaded.get().watermark().asLong();
            assertTrue(n >= seenOwn[t], ownSlot(t) + " went back from " + seenOwn[t] + " to " + n);
            seenOwn[t] = n;
          }
        }
      } while (writing.get() && !failed.get());
      return null;
    };
  }

  private static void check(String slot, Optional<CdcCheckpoint> loaded) {
    if (loaded.isEmpty()) {
      return;
    }
    CdcCheckpoint c = loaded.get();
    assertTrue(isWellFormed(c), "torn checkpoint loaded while storing: " + c);
    long n = c.watermark().asLong();
    int thread = (int) (n % THREADS);
    int iteration = (int) (n / THREADS) - 1;
    assertTrue(
        iteration >= 0 && iteration < STORES_PER_THREAD && slotOf(thread, iteration).equals(slot),
        slot + " holds " + c + ", which no thread stored there");
  }

  private static void await(List<Future<?>> futures, String what) throws InterruptedException {
    for (int i = 0; i < futures.size(); i++) {
      try {
        futures.get(i).get();
      } catch (ExecutionException e) {
        throw new AssertionError(what + " " + i + " failed: " + e.getCause(), e.getCause());
      }
    }
  }

  /**
   * Lets {@code threads} threads store to their own slots {@code closing_<t>} until {@link
   * CdcCheckpointStore#close} (called once each stored at least once) makes them fail; a store may
   * then throw only {@link IllegalStateException} or {@link CdcStoreException}, and none that
   * begins after close returned may succeed.
   *
   * @return for each thread, the last n whose store returned normally
   */
  static long[] storeUntilClosed(CdcCheckpointStore store, int threads) throws Exception {
    AtomicLongArray lastReturned = new AtomicLongArray(threads);
    CountDownLatch storedOnce = new CountDownLatch(threads);
    AtomicBoolean closing = new AtomicBoolean();
    AtomicBoolean closeReturned = new AtomicBoolean();
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    List<Future<?>> futures = new ArrayList<>();
    try {
      for (int t = 0; t < threads; t++) {
        int thread = t;
        futures.add(
            pool.submit(
                () -> {
                  try {
                    for (long n = 1; ; n++) {
                      boolean afterClose = closeReturned.get();
                      try {
                        store.store(checkpoint("closing_" + thread, n));
                      } catch (IllegalStateException | CdcStoreException e) {
                        if (!closing.get()) {
                          throw e;
                        }
                        return null;
                      }
                      assertTrue(
                          !afterClose,
                          "store() began after close() returned, yet returned normally");
                      lastReturned.set(thread, n);
                      if (n == 1) {
                        storedOnce.countDown();
                      }
                    }
                  } finally {
                    if (lastReturned.get(thread) == 0) {
                      storedOnce
                          .countDown(); // failed before its first store returned: do not block
                      // close
                    }
                  }
                }));
      }
      storedOnce.await();
      closing.set(true);
      store.close();
      closeReturned.set(true);
      await(futures, "storing thread");
    } finally {
      pool.shutdownNow();
      pool.awaitTermination(30, TimeUnit.SECONDS);
    }
    long[] result = new long[threads];
    for (int t = 0; t < threads; t++) {
      result[t] = lastReturned.get(t);
    }
    return result;
  }
}
