package io.datum.cdc.spi;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcStoreException;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Batching, superseding and failure handling of {@link GroupCommit}. */
@Timeout(value = 30, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class GroupCommitTest {

  private static final String STORE = "test-store:/x";

  private final ExecutorService pool = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    pool.shutdownNow();
    assertTrue(pool.awaitTermination(10, TimeUnit.SECONDS));
  }

  private static CdcCheckpoint cp(String slot, long watermark) {
    return CdcCheckpoint.atWatermark(slot, PgLsn.of(watermark));
  }

  /**
   * Records every batch; the first batch blocks until {@link #release} and batch number {@link
   * #failing} (0-based) throws {@link #failure}. Checks that batches never overlap.
   */
  private static final class Writer implements GroupCommit.BatchWriter {
    final List<List<CdcCheckpoint>> batches = new CopyOnWriteArrayList<>();
    final List<Thread> threads = new CopyOnWriteArrayList<>();
    final CountDownLatch firstBatchEntered = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final AtomicInteger inside = new AtomicInteger();
    volatile boolean blockFirst = true;
    volatile int failing = -1;
    volatile Exception failure = new IOException("disk full");

    @Override
    public void write(Collection<CdcCheckpoint> batch) throws Exception {
      assertEquals(1, inside.incrementAndGet(), "two batches written at once");
      try {
        int index = batches.size();
        batches.add(List.copyOf(batch));
        threads.add(Thread.currentThread());
        if (index == 0) {
          firstBatchEntered.countDown();
          if (blockFirst) {
            release.await();
          }
        }
        if (index == failing) {
          throw failure;
        }
      } finally {
        inside.decrementAndGet();
      }
    }
  }

  /**
   * Starts a caller on the pool once the previous ones have submitted, so submission order is
   * fixed.
   */
  private Future<?> submitInOrder(GroupCommit commit, CdcCheckpoint checkpoint) {
    long before = commit.checkpoints();
    Future<?> future = pool.submit(() -> commit.store(checkpoint));
    awaitSubmitted(commit, before + 1);
    return future;
  }

  private static void awaitSubmitted(GroupCommit commit, long count) {
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(1))
        .until(() -> commit.checkpoints() >= count);
    assertEquals(count, commit.checkpoints());
  }

  private static Throwable failureOf(Future<?> future) throws InterruptedException {
    try {
      future.get(10, TimeUnit.SECONDS);
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (TimeoutException e) {
      throw new AssertionError("caller did not return", e);
    }
  }

  @Test
  void tenCallersWhileTheFirstBatchIsBlockedMakeExactlyTwoBatches() throws Exception {
    Writer writer = new Writer();
    GroupCommit commit = new GroupCommit(STORE, writer);
    List<Future<?>> callers = new ArrayList<>();
    callers.add(pool.submit(() -> commit.store(cp("s0", 100))));
    assertTrue(writer.firstBatchEntered.await(10, TimeUnit.SECONDS));
    for (int i = 1; i < 10; i++) {
      CdcCheckpoint c = cp("s" + i, 100 + i);
      callers.add(pool.submit(() -> commit.store(c)));
    }
    awaitSubmitted(commit, 10);
    assertEquals(1, commit.batches(), "the nine wait while the first batch is written");
    writer.release.countDown();
    for (Future<?> caller : callers) {
      assertNull(failureOf(caller));
    }
    assertEquals(2, commit.batches());
    assertEquals(2, writer.batches.size());
    assertEquals(List.of(cp("s0", 100)), writer.batches.get(0));
    Set<CdcCheckpoint> second = new HashSet<>();
    for (int i = 1; i < 10; i++) {
      second.add(cp("s" + i, 100 + i));
    }
    assertEquals(9, writer.batches.get(1).size());
    assertEquals(second, new HashSet<>(writer.batches.get(1)));
  }

  @Test
  void theNewestCheckpointOfASlotWinsWithinABatch() throws Exception {
    Writer writer = new Writer();
    GroupCommit commit = new GroupCommit(STORE, writer);
    Future<?> leader = pool.submit(() -> commit.store(cp("other", 1)));
    assertTrue(writer.firstBatchEntered.await(10, TimeUnit.SECONDS));
    List<Future<?>> waiting = new ArrayList<>();
    waiting.add(submitInOrder(commit, cp("s", 1)));
    waiting.add(submitInOrder(commit, cp("t", 5)));
    waiting.add(submitInOrder(commit, cp("s", 2)));
    waiting.add(submitInOrder(commit, cp("s", 3)));
    waiting.add(
        submitInOrder(commit, cp("t", 4))); // newest by submission, though a lower watermark
    writer.release.countDown();
    assertNull(failureOf(leader));
    for (Future<?> f : waiting) {
      assertNull(failureOf(f), "a superseded caller returns normally");
    }
    assertEquals(2, writer.batches.size());
    assertEquals(Set.of(cp("s", 3), cp("t", 4)), new HashSet<>(writer.batches.get(1)));
    assertEquals(2, writer.batches.get(1).size());
    assertEquals(6, commit.checkpoints());
  }

  @Test
  void aWriterExceptionFailsExactlyTheCallersOfThatBatch() throws Exception {
    Writer writer = new Writer();
    writer.failing = 1;
    IOException diskFull = new IOException("disk full");
    writer.failure = diskFull;
    GroupCommit commit = new GroupCommit(STORE, writer);
    Future<?> first = pool.submit(() -> commit.store(cp("a", 1)));
    assertTrue(writer.firstBatchEntered.await(10, TimeUnit.SECONDS));
    List<Future<?>> secondBatch = new ArrayList<>();
    for (String slot : List.of("a", "b", "c")) {
      secondBatch.add(submitInOrder(commit, cp(slot, 2)));
    }
    writer.release.countDown();
    assertNull(failureOf(first), "the first batch succeeded");
    for (Future<?> f : secondBatch) {
      Throwable failure = failureOf(f);
      CdcStoreException e = assertInstanceOf(CdcStoreException.class, failure);
      assertSame(diskFull, e.getCause());
      assertTrue(e.getMessage().contains(STORE), e.getMessage());
      assertTrue(e.getMessage().contains("disk full"), e.getMessage());
    }
    commit.store(cp("d", 3)); // the next batch is tried again and succeeds
    assertEquals(3, commit.batches());
    assertEquals(List.of(cp("d", 3)), writer.batches.get(2));
  }

  @Test
  void aCdcStoreExceptionOfTheWriterKeepsItsMessage() {
    Writer writer = new Writer();
    writer.blockFirst = false;
    writer.failing = 0;
    CdcStoreException cause = new CdcStoreException("cannot fsync /var/lib/cdc/s.json");
    writer.failure = cause;
    GroupCommit commit = new GroupCommit(STORE, writer);
    CdcStoreException e = assertThrows(CdcStoreException.class, () -> commit.store(cp("s", 1)));
    assertEquals("cannot fsync /var/lib/cdc/s.json", e.getMessage());
    assertSame(cause, e.getCause());
    commit.store(cp("s", 2));
    assertEquals(List.of(List.of(cp("s", 1)), List.of(cp("s", 2))), writer.batches);
  }

  @Test
  void aSingleCallerCostsExactlyOneBatchPerCall() {
    Writer writer = new Writer();
    writer.blockFirst = false;
    GroupCommit commit = new GroupCommit(STORE, writer);
    for (int i = 1; i <= 50; i++) {
      commit.store(cp(i % 2 == 0 ? "even" : "odd", i));
      assertEquals(i, commit.batches());
      assertEquals(i, commit.checkpoints());
      assertEquals(List.of(cp(i % 2 == 0 ? "even" : "odd", i)), writer.batches.get(i - 1));
      assertSame(
          Thread.currentThread(), writer.threads.get(i - 1), "the leader writes on its own thread");
    }
    assertEquals(50, writer.batches.size());
  }

  @Test
  void anInterruptedWaiterGetsCdcStoreExceptionAndKeepsItsInterrupt() throws Exception {
    Writer writer = new Writer();
    GroupCommit commit = new GroupCommit(STORE, writer);
    Future<?> leader = pool.submit(() -> commit.store(cp("a", 1)));
    assertTrue(writer.firstBatchEntered.await(10, TimeUnit.SECONDS));
    AtomicReference<Throwable> thrown = new AtomicReference<>();
    AtomicReference<Boolean> interrupted = new AtomicReference<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                commit.store(cp("b", 1));
              } catch (Throwable t) {
                thrown.set(t);
                interrupted.set(Thread.currentThread().isInterrupted());
              }
            });
    waiter.start();
    awaitSubmitted(commit, 2);
    waiter.interrupt();
    waiter.join(10_000);
    CdcStoreException e = assertInstanceOf(CdcStoreException.class, thrown.get());
    assertTrue(e.getMessage().contains(STORE) && e.getMessage().contains("slot b"), e.getMessage());
    assertEquals(Boolean.TRUE, interrupted.get());
    writer.release.countDown();
    assertNull(failureOf(leader));
  }

  @Test
  void concurrentCallersNeverOverlapBatchesNorMoveASlotBack() throws Exception {
    Writer writer = new Writer();
    writer.blockFirst = false;
    Map<String, Long> written = new ConcurrentHashMap<>();
    GroupCommit commit =
        new GroupCommit(
            STORE,
            batch -> {
              writer.write(batch);
              for (CdcCheckpoint c : batch) {
                Long before = written.put(c.slot(), c.watermark().asLong());
                assertTrue(
                    before == null || before < c.watermark().asLong(), c.slot() + " went back");
              }
            });
    List<Future<?>> callers = new ArrayList<>();
    CountDownLatch start = new CountDownLatch(1);
    for (int t = 0; t < 8; t++) {
      String slot = "s" + t;
      callers.add(
          pool.submit(
              () -> {
                start.await();
                for (long n = 1; n <= 300; n++) {
                  commit.store(cp(slot, n));
                }
                return null;
              }));
    }
    start.countDown();
    for (Future<?> caller : callers) {
      assertNull(failureOf(caller));
    }
    assertEquals(2400, commit.checkpoints());
    for (int t = 0; t < 8; t++) {
      assertEquals(300L, written.get("s" + t));
    }
    assertTrue(commit.batches() <= 2400);
  }
}
