package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The coordinator's lock-free acknowledgements against a registering thread that makes the rings
 * wrap and grow and forgets its pending transactions as at a reconnect (registering them again as
 * the server would send them), while other threads snapshot. Checked: no snapshot claims an event
 * whose acknowledgement had not begun (the loss a racing acknowledgement could cause); a snapshot
 * begun after {@code record} returned includes its event; and in the end every event counts, so the
 * watermark reaches the last transaction (no acknowledgement lost).
 */
class FeedbackCoordinatorConcurrencyTest {

  private static final String SLOT = "slot";
  private static final int WORKERS = 3;

  /** Per transaction (by end LSN): which events' acknowledgement has begun. */
  private final Map<Long, AtomicIntegerArray> begun = new ConcurrentHashMap<>();

  /** Per transaction (by end LSN): which events' acknowledgement has returned. */
  private final Map<Long, AtomicIntegerArray> returned = new ConcurrentHashMap<>();

  private static final int TRANSACTIONS = 60_000;

  /** The transactions registered so far, in commit order: [0, registeredCount). */
  private final long[] registeredEnds = new long[TRANSACTIONS];

  private final int[] registeredCounts = new int[TRANSACTIONS];
  private volatile int registeredCount;
  private final ConcurrentLinkedQueue<CdcOffset> queue = new ConcurrentLinkedQueue<>();
  private final AtomicBoolean registering = new AtomicBoolean(true);
  private final AtomicLong problems = new AtomicLong();
  private final List<String> firstProblems = new CopyOnWriteArrayList<>();

  @Test
  @Timeout(value = 120, unit = TimeUnit.SECONDS)
  void racingAcknowledgementsGrowthAndResetsLoseNothingAndClaimNothingExtra() throws Exception {
    FeedbackCoordinator coordinator = new FeedbackCoordinator(SLOT, null);
    List<Thread> threads = new ArrayList<>();
    for (int w = 0; w < WORKERS; w++) {
      long seed = 1000 + w;
      threads.add(new Thread(() -> acknowledge(coordinator, new Random(seed)), "ack-" + w));
    }
    threads.add(new Thread(() -> snapshots(coordinator), "snapshots"));
    threads.forEach(Thread::start);

    Random random = new Random(42);
    long lsn = 0xFFFF_FFFF_0000_0000L; // crosses the signed boundary
    for (int i = 0; i < TRANSACTIONS; i++) {
      lsn += 1 + random.nextInt(50);
      int count = random.nextInt(20) == 0 ? random.nextInt(300) : random.nextInt(6);
      begun.put(lsn, new AtomicIntegerArray(count));
      returned.put(lsn, new AtomicIntegerArray(count));
      registeredEnds[i] = lsn;
      registeredCounts[i] = count;
      registeredCount = i + 1;
      deliver(lsn, count, coordinator.register(PgLsn.of(lsn), count));
      while (queue.size() > 20_000) {
        Thread.onSpinWait(); // bounded hand-off, as the source's
      }
      if (i % 7_919 == 7_918) {
        // a reconnect: forget the pending transactions, then the server sends them again
        coordinator.resetPending();
        long watermark = coordinator.watermark().asLong();
        for (int r = 0; r <= i; r++) {
          long end = registeredEnds[r];
          if (Long.compareUnsigned(end, watermark) > 0) {
            AtomicIntegerArray done = returned.get(end);
            BitSet doneBefore = new BitSet();
            for (int e = 0; e < done.length(); e++) {
              if (done.get(e) == 1) {
                doneBefore.set(e);
              }
            }
            BitSet alreadyAcknowledged = coordinator.register(PgLsn.of(end), registeredCounts[r]);
            doneBefore.andNot(alreadyAcknowledged == null ? new BitSet() : alreadyAcknowledged);
            if (!doneBefore.isEmpty()) {
              problem(
                  "events "
                      + doneBefore
                      + " of "
                      + PgLsn.of(end)
                      + " were acknowledged before"
                      + " the transaction was registered again, but are delivered again");
            }
            deliver(end, registeredCounts[r], alreadyAcknowledged);
          }
        }
      }
    }
    registering.set(false);
    for (Thread t : threads) {
      t.join();
    }
    assertEquals(0, problems.get(), () -> problems.get() + " problems, first: " + firstProblems);
    assertEquals(PgLsn.of(lsn), coordinator.watermark());
    assertEquals(0, coordinator.pendingEvents());
    CdcCheckpoint last = coordinator.checkpoint();
    assertTrue(last.acknowledgedBeyond().isEmpty(), last::toString);
  }

  private void deliver(long end, int count, BitSet alreadyAcknowledged) {
    for (int i = 0; i < count; i++) {
      if (alreadyAcknowledged == null || !alreadyAcknowledged.get(i)) {
        queue.add(new CdcOffset(SLOT, PgLsn.of(end), PgLsn.of(end - 1), 0, i, count));
      }
    }
  }

  /** Takes offsets in bursts, acknowledges them shuffled, some twice, some much later again. */
  private void acknowledge(FeedbackCoordinator coordinator, Random random) {
    List<CdcOffset> burst = new ArrayList<>();
    List<CdcOffset> old = new ArrayList<>();
    while (registering.get() || !queue.isEmpty()) {
      burst.clear();
      for (int n = 1 + random.nextInt(64); n > 0; n--) {
        CdcOffset offset = queue.poll();
        if (offset == null) {
          break;
        }
        burst.add(offset);
      }
      Collections.shuffle(burst, random);
      for (CdcOffset offset : burst) {
        begun.get(offset.txEndLsn().asLong()).set(offset.eventIndex(), 1);
        boolean checkAfter = random.nextInt(500) == 0;
        if (random.nextBoolean()) {
          coordinator.record(offset);
        } else {
          coordinator.acknowledge(offset);
        }
        returned.get(offset.txEndLsn().asLong()).set(offset.eventIndex(), 1);
        if (checkAfter && !includes(coordinator.checkpoint(), offset)) {
          problem("a snapshot after record(" + offset + ") returned does not include it");
        }
        if (random.nextInt(8) == 0) {
          coordinator.record(offset); // a duplicate
        }
        if (random.nextInt(64) == 0) {
          old.add(offset);
        }
      }
      if (old.size() > 200) {
        for (CdcOffset offset : old) {
          coordinator.record(offset); // long after: behind the watermark or a reused ring word
        }
        old.clear();
      }
    }
  }

  private void snapshots(FeedbackCoordinator coordinator) {
    while (registering.get() || !queue.isEmpty()) {
      CdcCheckpoint checkpoint = coordinator.checkpoint();
      long watermark = checkpoint.watermark().asLong();
      for (int r = 0, n = registeredCount; r < n; r++) {
        long end = registeredEnds[r];
        if (Long.compareUnsigned(end, watermark) > 0) {
          break; // registered in ascending order
        }
        AtomicIntegerArray flags = begun.get(end);
        for (int i = 0; i < flags.length(); i++) {
          if (flags.get(i) == 0) {
            problem(
                "watermark "
                    + checkpoint.watermark()
                    + " passes "
                    + PgLsn.of(end)
                    + " event "
                    + i
                    + " whose acknowledgement had not begun");
            return;
          }
        }
      }
      for (CdcCheckpoint.AcknowledgedRun run : checkpoint.acknowledgedRuns()) {
        for (var tx : begun.entrySet()) {
          if (!run.contains(PgLsn.of(tx.getKey()))) {
            continue;
          }
          AtomicIntegerArray flags = tx.getValue();
          for (int i = 0; i < flags.length(); i++) {
            if (flags.get(i) == 0) {
              problem(
                  "snapshot's run "
                      + run
                      + " claims "
                      + PgLsn.of(tx.getKey())
                      + " event "
                      + i
                      + " whose acknowledgement had not begun");
              return;
            }
          }
        }
      }
      for (CdcCheckpoint.PartialTransaction partial : checkpoint.acknowledgedBeyond()) {
        AtomicIntegerArray flags = begun.get(partial.txEndLsn().asLong());
        int[] ranges = partial.acknowledgedRanges();
        for (int r = 0; r < ranges.length; r += 2) {
          for (int i = ranges[r]; i < ranges[r + 1]; i++) {
            if (flags.get(i) == 0) {
              problem(
                  "snapshot claims "
                      + partial.txEndLsn()
                      + " event "
                      + i
                      + " whose acknowledgement had not begun");
              return;
            }
          }
        }
      }
    }
  }

  private static boolean includes(CdcCheckpoint checkpoint, CdcOffset offset) {
    return checkpoint.isAcknowledged(offset.txEndLsn(), offset.eventIndex());
  }

  private void problem(String description) {
    if (problems.incrementAndGet() <= 5) {
      firstProblems.add(description);
    }
  }
}
