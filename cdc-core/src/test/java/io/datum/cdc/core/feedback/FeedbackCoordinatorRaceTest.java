package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Races of the lock-free acknowledgement path found by review, each reproduced against the code
 * before its fix: a duplicate acknowledgement after the ring tag repeated, an acknowledgement
 * racing the reset at a reconnect, and one racing the registration again of a transaction known
 * from before the reconnect.
 */
class FeedbackCoordinatorRaceTest {

  private static CdcOffset offset(long tx, int index, int count) {
    return new CdcOffset("slot", PgLsn.of(tx), PgLsn.of(tx - 1), 7, index, count);
  }

  /**
   * The 16-bit ring tag repeats after 65,536 laps: a late duplicate must still set nothing (the
   * position is behind the acknowledged prefix).
   */
  @Test
  void aDuplicateAcknowledgementAfter65536LapsSetsNothing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    int lap = 64 * FeedbackCoordinator.EVENTS_PER_WORD; // one transaction fills the smallest ring
    long lsn = 0;
    for (int t = 0; t < 65536; t++) {
      lsn += 10;
      feedback.register(PgLsn.of(lsn), lap);
      assertTrue(feedback.acknowledgeTransaction(offset(lsn, 0, lap)));
    }
    long pending = lsn + 10; // its only event: position 65536 * lap, ring slot 0, tag 0 again
    feedback.register(PgLsn.of(pending), 1);
    // a duplicate acknowledgement of position 0 (validated, then descheduled) arrives now
    boolean set = feedback.setBit(0);
    assertFalse(set, "late duplicate of position 0 set the bit of position 65536 * 3072");
    assertEquals(PgLsn.of(lsn), feedback.watermark(), "watermark passes an unacknowledged event");
  }

  /**
   * An acknowledgement that reads the new epoch, the old transaction ring and the fresh bit ring of
   * a reset (when the epoch was published before the fresh transaction ring) set a bit of an old
   * position in the fresh ring and returned: recorded nowhere. Every acknowledgement that returned
   * must be in the snapshot after the reset.
   */
  @Test
  void acknowledgementsRacingAResetAreKept() throws Exception {
    int lost = 0;
    List<String> first = new ArrayList<>();
    long deadline = System.nanoTime() + 8_000_000_000L;
    for (int round = 0; round < 40 && System.nanoTime() < deadline && lost == 0; round++) {
      FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
      long lsn = 1000;
      feedback.register(PgLsn.of(lsn), 1); // never acknowledged: everything stays pending
      int m = 2000;
      long[] targets = new long[m];
      for (int i = 0; i < m; i++) {
        lsn += 10;
        targets[i] = lsn;
        feedback.register(PgLsn.of(lsn), 1);
        for (int e = 0; e < 50; e++) { // empty transactions: a large transactions ring
          lsn += 10;
          feedback.register(PgLsn.of(lsn), 0);
        }
      }
      List<Integer> order = new ArrayList<>();
      for (int i = 0; i < m; i++) {
        order.add(i);
      }
      Collections.shuffle(order, new Random(round));
      AtomicInteger done = new AtomicInteger();
      AtomicReference<Throwable> failure = new AtomicReference<>();
      Thread acker =
          new Thread(
              () -> {
                try {
                  for (int i : order) {
                    feedback.record(offset(targets[i], 0, 1));
                    done.incrementAndGet();
                  }
                } catch (Throwable t) {
                  failure.set(t);
                }
              });
      acker.start();
      while (done.get() < m / 4 && acker.isAlive()) {
        Thread.onSpinWait();
      }
      feedback.resetPending();
      acker.join();
      if (failure.get() != null) {
        throw new AssertionError(failure.get());
      }
      CdcCheckpoint checkpoint = feedback.checkpoint();
      for (long t : targets) {
        if (!checkpoint.isAcknowledged(PgLsn.of(t), 0)) {
          lost++;
          if (first.size() < 3) {
            first.add("round " + round + ": " + PgLsn.of(t));
          }
        }
      }
    }
    assertEquals(0, lost, "acknowledgements lost (record returned, not in snapshot): " + first);
  }

  /**
   * While a transaction known from before a reconnect is registered again, an acknowledgement of
   * one of its events delivered before the reconnect must be accepted (it was rejected as "not
   * delivered" when the registration took the transaction out of the restored set before publishing
   * itself).
   */
  @Test
  void acknowledgementsRacingARegistrationAgainAreAccepted() throws Exception {
    int rejected = 0;
    String message = null;
    for (int round = 0; round < 10 && rejected == 0; round++) {
      FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
      int count = 2_000_000;
      long x = 5000;
      feedback.register(PgLsn.of(x), count);
      feedback.record(offset(x, 0, count));
      feedback.resetPending(); // x is restored with event 0 acknowledged
      AtomicBoolean registered = new AtomicBoolean();
      AtomicInteger errors = new AtomicInteger();
      AtomicReference<String> msg = new AtomicReference<>();
      AtomicInteger progress = new AtomicInteger();
      Thread acker =
          new Thread(
              () -> {
                for (int i = 1; i < count && !registered.get(); i++) {
                  try {
                    feedback.record(offset(x, i, count)); // delivered before the reconnect
                    progress.incrementAndGet();
                  } catch (CdcCheckpointException e) {
                    errors.incrementAndGet();
                    msg.compareAndSet(null, "event " + i + ": " + e.getMessage());
                  }
                }
              });
      acker.start();
      while (progress.get() < 1_000 && acker.isAlive()) {
        Thread.onSpinWait(); // acknowledging into the restored set: now register it again
      }
      feedback.register(PgLsn.of(x), count);
      registered.set(true);
      acker.join();
      rejected += errors.get();
      message = msg.get();
    }
    assertEquals(0, rejected, "acknowledgements of delivered events rejected: " + message);
  }

  /**
   * The interleaving behind "a snapshot after record(...) returned does not include it": a thread
   * acknowledging an event delivered before a reconnect reads the epoch, is descheduled while the
   * coordinator is reset and the transaction registered again, then finds the transaction at its
   * fresh position and sets the bit in the fresh ring. Its check of the epoch after the
   * compare-and-set failed, the slow path found the bit set and returned -1 without noting the word
   * as acknowledged, and checkpoints (which scan up to the newest noted word) left the event out. A
   * test passes the epoch read before the reset, which replays the descheduled thread exactly.
   */
  @Test
  void anAcknowledgementThatReadTheEpochBeforeAResetCountsInTheFreshRing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    long x = 20;
    feedback.register(PgLsn.of(x), 100); // positions 0..99
    assertTrue(feedback.record(offset(x, 0, 100))); // the acknowledgements' hint: this one
    int epochBefore = 0; // a new coordinator's; the acknowledging thread reads it, then sleeps
    feedback.resetPending();
    BitSet first = new BitSet();
    first.set(0);
    assertEquals(first, feedback.register(PgLsn.of(x), 100)); // positions 100..199
    // the thread resumes: the transaction after the hint is x again, event 61 at position 161
    long position = feedback.mark(offset(x, 61, 100), false, epochBefore);
    assertEquals(161, position, "this call acknowledged event 61 at its fresh position");
    CdcCheckpoint checkpoint = feedback.checkpoint();
    assertTrue(checkpoint.isAcknowledged(PgLsn.of(x), 61), checkpoint::toString);
    assertEquals(PgLsn.ZERO, feedback.watermark());
  }
}
