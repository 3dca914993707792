package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link SourceCheckpointHandle#acknowledgeAsync}: one background store per cohort. */
class SourceCheckpointHandleAsyncTest {
  private static final String SLOT = "slot";
  private final ExecutorService executor = Executors.newSingleThreadExecutor();
  private final AtomicInteger tasks = new AtomicInteger();

  @AfterEach
  void shutDown() {
    executor.shutdownNow();
  }

  /**
   * A store whose first write waits for a latch, and that notes the watermark of every write and
   * when each began.
   */
  private static final class GatedStore implements CdcCheckpointStore {
    final MemoryCheckpointStore memory = new MemoryCheckpointStore();
    final List<Long> began = new ArrayList<>();
    final CountDownLatch firstStoreBegan = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger stores = new AtomicInteger();
    final AtomicReference<RuntimeException> failWith = new AtomicReference<>();
    volatile PgLsn stored = PgLsn.ZERO;

    @Override
    public Optional<CdcCheckpoint> load(String slot) {
      return memory.load(slot);
    }

    @Override
    public void store(CdcCheckpoint checkpoint) {
      synchronized (began) {
        began.add(System.nanoTime());
      }
      if (stores.incrementAndGet() == 1) {
        firstStoreBegan.countDown();
        try {
          assertTrue(release.await(30, TimeUnit.SECONDS), "the test did not release the store");
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new IllegalStateException(e);
        }
      }
      RuntimeException failure = failWith.get();
      if (failure != null) {
        throw failure;
      }
      memory.store(checkpoint);
      stored = checkpoint.watermark();
    }

    @Override
    public SortedSet<String> slots() {
      return memory.slots();
    }

    @Override
    public String location() {
      return "gated";
    }

    @Override
    public void close() {}
  }

  private SourceCheckpointHandle handle(FeedbackCoordinator coordinator, GatedStore store) {
    return new SourceCheckpointHandle(
        coordinator,
        store,
        r ->
            executor.execute(
                () -> {
                  tasks.incrementAndGet();
                  r.run();
                }),
        failure -> {},
        () -> {},
        true);
  }

  private static CdcOffset offset(long tx) {
    return new CdcOffset(SLOT, PgLsn.of(tx), PgLsn.of(tx - 1), 7, 0, 1);
  }

  @Test
  void acknowledgementsRecordedWhileAStoreRunsShareOneStoreAndEachFutureSeesItsOwnStored()
      throws Exception {
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    int n = 2000;
    for (int i = 1; i <= n; i++) {
      coordinator.register(PgLsn.of(100L * i), 1);
    }
    GatedStore store = new GatedStore();
    SourceCheckpointHandle handle = handle(coordinator, store);
    List<CompletableFuture<Void>> futures = new ArrayList<>();
    List<AssertionError> wrong = new ArrayList<>();
    CompletableFuture<Void> first = handle.acknowledgeAsync(offset(100));
    assertTrue(store.firstStoreBegan.await(30, TimeUnit.SECONDS));
    for (int i = 2; i <= n; i++) {
      long tx = 100L * i;
      CompletableFuture<Void> f = handle.acknowledgeAsync(offset(tx));
      f.whenComplete(
          (ok, e) -> {
            if (e == null && store.stored.compareTo(PgLsn.of(tx)) < 0) {
              synchronized (wrong) {
                wrong.add(new AssertionError("completed before " + tx + " was stored"));
              }
            }
          });
      futures.add(f);
    }
    assertFalse(first.isDone(), "the first store is still running");
    store.release.countDown();
    first.get(30, TimeUnit.SECONDS);
    for (CompletableFuture<Void> f : futures) {
      f.get(30, TimeUnit.SECONDS);
    }
    assertEquals(List.of(), wrong);
    assertEquals(PgLsn.of(100L * n), store.stored);
    assertEquals(2, store.stores.get(), "the first store, then one for everything after it");
    assertEquals(2, tasks.get(), "one executor task per store, not one per acknowledgement");
  }

  @Test
  void backgroundStoresBeginAtLeastTheGapApart() throws Exception {
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    int n = 20;
    for (int i = 1; i <= n; i++) {
      coordinator.register(PgLsn.of(100L * i), 1);
    }
    GatedStore store = new GatedStore();
    store.release.countDown(); // no store waits
    SourceCheckpointHandle handle = handle(coordinator, store);
    // one acknowledgement after another, each waiting for its store: every store is a new cohort
    for (int i = 1; i <= n; i++) {
      handle.acknowledgeAsync(offset(100L * i)).get(30, TimeUnit.SECONDS);
      assertEquals(PgLsn.of(100L * i), store.stored);
    }
    List<Long> began = store.began;
    assertEquals(n, began.size(), "one store per acknowledgement");
    for (int i = 1; i < n; i++) {
      long gap = began.get(i) - began.get(i - 1);
      assertTrue(
          gap >= SourceCheckpointHandle.ASYNC_STORE_GAP_NANOS,
          "store " + i + " began " + gap + " ns after the one before it");
    }
  }

  @Test
  void aCallerCancellingItsFutureLeavesTheOthersToTheStore() throws Exception {
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    coordinator.register(PgLsn.of(100), 1);
    coordinator.register(PgLsn.of(200), 1);
    coordinator.register(PgLsn.of(300), 1);
    GatedStore store = new GatedStore();
    SourceCheckpointHandle handle = handle(coordinator, store);
    CompletableFuture<Void> first = handle.acknowledgeAsync(offset(100));
    assertTrue(store.firstStoreBegan.await(30, TimeUnit.SECONDS));
    CompletableFuture<Void> cancelled = handle.acknowledgeAsync(offset(200));
    CompletableFuture<Void> kept = handle.acknowledgeAsync(offset(300));
    assertTrue(cancelled.cancel(true));
    store.release.countDown();
    first.get(30, TimeUnit.SECONDS);
    kept.get(30, TimeUnit.SECONDS);
    assertEquals(PgLsn.of(300), store.stored);
  }

  @Test
  void aFailedStoreFailsEveryFutureOfItsCohort() throws Exception {
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    coordinator.register(PgLsn.of(100), 1);
    coordinator.register(PgLsn.of(200), 1);
    coordinator.register(PgLsn.of(300), 1);
    GatedStore store = new GatedStore();
    SourceCheckpointHandle handle = handle(coordinator, store);
    CompletableFuture<Void> first = handle.acknowledgeAsync(offset(100));
    assertTrue(store.firstStoreBegan.await(30, TimeUnit.SECONDS));
    CompletableFuture<Void> second = handle.acknowledgeAsync(offset(200));
    CompletableFuture<Void> third = handle.acknowledgeAsync(offset(300));
    store.failWith.set(new IllegalStateException("disk full"));
    store.release.countDown();
    for (CompletableFuture<Void> f : List.of(first, second, third)) {
      ExecutionException e =
          assertThrows(ExecutionException.class, () -> f.get(30, TimeUnit.SECONDS));
      assertInstanceOf(CdcStoreException.class, e.getCause());
      assertTrue(e.getCause().getMessage().contains("disk full"), e.getCause().getMessage());
    }
  }
}
