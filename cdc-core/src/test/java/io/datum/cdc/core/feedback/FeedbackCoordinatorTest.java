package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpointException;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.BitSet;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

class FeedbackCoordinatorTest {

  private static CdcOffset offset(String slot, long tx, int index, int count) {
    return new CdcOffset(slot, PgLsn.of(tx), PgLsn.of(tx - 1), 7, index, count);
  }

  /** Feedback waits for complete contiguous transactions (the first test of the ported code). */
  @Test
  void watermarkWaitsForCompleteContiguousTransactions() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 2);
    feedback.register(PgLsn.of(20), 1);

    assertFalse(feedback.acknowledge(offset("slot", 20, 0, 1)));
    assertFalse(feedback.acknowledge(offset("slot", 10, 0, 2)));
    assertTrue(feedback.acknowledge(offset("slot", 10, 1, 2)));
    assertEquals(PgLsn.of(20), feedback.watermark());
    assertFalse(feedback.hasPending());
  }

  @Test
  void acknowledgingTwiceIsHarmless() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 2);
    assertFalse(feedback.acknowledge(offset("slot", 10, 0, 2)));
    assertFalse(feedback.acknowledge(offset("slot", 10, 0, 2)));
    assertEquals(PgLsn.ZERO, feedback.watermark());
    assertTrue(feedback.acknowledge(offset("slot", 10, 1, 2)));
    assertFalse(feedback.acknowledge(offset("slot", 10, 1, 2)), "behind the watermark: no-op");
    assertEquals(PgLsn.of(10), feedback.watermark());
  }

  @Test
  void offsetOfAnotherSlotIsRejectedNamingBoth() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 1);
    CdcCheckpointException e =
        assertThrows(
            CdcCheckpointException.class, () -> feedback.acknowledge(offset("other", 10, 0, 1)));
    assertTrue(
        e.getMessage().contains("\"other\"") && e.getMessage().contains("\"slot\""),
        e.getMessage());
  }

  @Test
  void countMismatchIsRejectedAndCreatesNothing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 2);
    CdcCheckpointException e =
        assertThrows(
            CdcCheckpointException.class, () -> feedback.acknowledge(offset("slot", 10, 0, 1)));
    assertTrue(
        e.getMessage().contains("1 events") && e.getMessage().contains("with 2"), e.getMessage());
    assertEquals(1, feedback.pendingTransactions());
  }

  @Test
  void unregisteredTransactionIsRejected() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 1);
    CdcCheckpointException e =
        assertThrows(
            CdcCheckpointException.class, () -> feedback.acknowledge(offset("slot", 30, 0, 1)));
    assertTrue(e.getMessage().contains("not delivered"), e.getMessage());
    assertEquals(
        1, feedback.pendingTransactions(), "an acknowledgement never registers a transaction");
  }

  @Test
  void emptyTransactionCompletesAtOnceAndMovesTheWatermark() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    assertNull(feedback.register(PgLsn.of(10), 0));
    assertEquals(PgLsn.of(10), feedback.watermark());
    feedback.register(PgLsn.of(20), 1);
    feedback.register(PgLsn.of(30), 0);
    assertEquals(PgLsn.of(10), feedback.watermark(), "the empty one waits behind the pending one");
    assertTrue(feedback.acknowledge(offset("slot", 20, 0, 1)));
    assertEquals(PgLsn.of(30), feedback.watermark());
  }

  @Test
  void keepaliveMovesTheWatermarkOnlyWhenNothingIsPending() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 1);
    assertFalse(feedback.advanceIdle(PgLsn.of(100)));
    feedback.acknowledge(offset("slot", 10, 0, 1));
    assertTrue(feedback.advanceIdle(PgLsn.of(100)));
    assertEquals(PgLsn.of(100), feedback.watermark());
    assertFalse(feedback.advanceIdle(PgLsn.of(50)), "never backwards");
    assertTrue(feedback.isAtOrBeforeWatermark(PgLsn.of(100)));
  }

  @Test
  void transactionsMustBeRegisteredInCommitOrder() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(20), 1);
    assertThrows(IllegalStateException.class, () -> feedback.register(PgLsn.of(10), 1));
  }

  @Test
  void snapshotKeepsAcknowledgedEventsBeyondTheWatermark() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 2);
    feedback.register(PgLsn.of(20), 3);
    feedback.acknowledge(offset("slot", 20, 2, 3));
    feedback.acknowledge(offset("slot", 20, 0, 3));
    CdcCheckpoint snapshot = feedback.checkpoint();
    assertEquals(PgLsn.ZERO, snapshot.watermark());
    assertEquals(1, snapshot.acknowledgedBeyond().size());
    CdcCheckpoint.PartialTransaction tx = snapshot.acknowledgedBeyond().get(0);
    assertEquals(PgLsn.of(20), tx.txEndLsn());
    Assertions.assertArrayEquals(new int[] {0, 1, 2, 3}, tx.acknowledgedRanges());
  }

  @Test
  void snapshotsOfALargeTransactionAcknowledgedMostlyInOrderStayRanges() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    int n = 1_000_000;
    feedback.register(PgLsn.of(10), n);
    for (int i = 0; i < n - 1; i++) {
      if (i == 10) {
        continue; // a gap early on
      }
      feedback.acknowledge(offset("slot", 10, i, n));
      if (i % 100_000 == 0 || i == n - 2) {
        CdcCheckpoint.PartialTransaction tx = feedback.checkpoint().acknowledgedBeyond().get(0);
        int[] expected = i < 10 ? new int[] {0, i + 1} : new int[] {0, 10, 11, i + 1};
        Assertions.assertArrayEquals(expected, tx.acknowledgedRanges(), "after " + i);
      }
    }
    feedback.acknowledge(offset("slot", 10, 10, n));
    Assertions.assertArrayEquals(
        new int[] {0, n - 1},
        feedback.checkpoint().acknowledgedBeyond().get(0).acknowledgedRanges());
    assertTrue(feedback.acknowledge(offset("slot", 10, n - 1, n)));
    assertEquals(List.of(), feedback.checkpoint().acknowledgedBeyond());
  }

  @Test
  void restoredAcknowledgementsAreReportedAtRegistrationAndCount() {
    BitSet acked = new BitSet();
    acked.set(1);
    CdcCheckpoint stored =
        new CdcCheckpoint(
            "slot",
            PgLsn.of(10),
            List.of(CdcCheckpoint.PartialTransaction.ofRanges(PgLsn.of(30), 2, new int[] {1, 2})));
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", stored);
    assertTrue(feedback.isAtOrBeforeWatermark(PgLsn.of(10)), "resent transaction is dropped");
    assertNull(feedback.register(PgLsn.of(20), 1));
    assertEquals(acked, feedback.register(PgLsn.of(30), 2));
    feedback.acknowledge(offset("slot", 20, 0, 1));
    assertEquals(PgLsn.of(20), feedback.watermark());
    assertTrue(
        feedback.acknowledge(offset("slot", 30, 0, 2)),
        "event 1 was acknowledged before the restart");
    assertEquals(PgLsn.of(30), feedback.watermark());
  }

  @Test
  void aLargeTransactionAcknowledgedBackwardsGrowsTheRingsAndCompletes() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 3);
    int large = 100_000;
    feedback.register(PgLsn.of(20), large);
    for (int t = 0; t < 200; t++) {
      feedback.register(PgLsn.of(30 + t), 1);
    }
    assertEquals(202, feedback.pendingTransactions());
    assertEquals(3 + large + 200, feedback.pendingEvents());
    for (int i = large - 1; i >= 0; i--) {
      assertFalse(feedback.acknowledge(offset("slot", 20, i, large)));
    }
    for (int t = 0; t < 200; t++) {
      assertFalse(feedback.acknowledge(offset("slot", 30 + t, 0, 1)));
    }
    feedback.acknowledge(offset("slot", 10, 2, 3));
    feedback.acknowledge(offset("slot", 10, 0, 3));
    assertEquals(PgLsn.ZERO, feedback.watermark());
    assertTrue(feedback.acknowledge(offset("slot", 10, 1, 3)));
    assertEquals(PgLsn.of(229), feedback.watermark());
    assertEquals(0, feedback.pendingEvents());
  }

  @Test
  void afterAReconnectResentTransactionsSkipAcknowledgedEventsAndLateAcknowledgementsCount() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 1);
    feedback.register(PgLsn.of(20), 3);
    feedback.register(PgLsn.of(30), 1);
    feedback.acknowledge(offset("slot", 10, 0, 1));
    feedback.acknowledge(offset("slot", 20, 0, 3));
    feedback.resetPending(); // connection lost: the server sends 20 and 30 again
    assertEquals(0, feedback.pendingTransactions());
    assertTrue(feedback.isAtOrBeforeWatermark(PgLsn.of(10)));
    feedback.acknowledge(offset("slot", 20, 2, 3)); // an event delivered before the loss
    BitSet expected = new BitSet();
    expected.set(0);
    expected.set(2);
    assertEquals(expected, feedback.register(PgLsn.of(20), 3));
    assertNull(feedback.register(PgLsn.of(30), 1));
    assertTrue(feedback.acknowledge(offset("slot", 20, 1, 3)));
    assertEquals(PgLsn.of(20), feedback.watermark());
    assertTrue(feedback.acknowledge(offset("slot", 30, 0, 1)));
    assertEquals(PgLsn.of(30), feedback.watermark());
  }

  @Test
  void aWholeTransactionIsAcknowledgedAtOnce() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 130);
    feedback.register(PgLsn.of(20), 2);
    feedback.acknowledge(offset("slot", 10, 5, 130));
    assertFalse(feedback.acknowledgeTransaction(offset("slot", 20, 1, 2)));
    assertTrue(feedback.acknowledgeTransaction(offset("slot", 10, 0, 130)));
    assertEquals(PgLsn.of(20), feedback.watermark());
    assertThrows(
        CdcCheckpointException.class,
        () -> {
          feedback.register(PgLsn.of(30), 3);
          feedback.acknowledgeTransaction(offset("slot", 30, 0, 4));
        });
  }

  /**
   * A duplicate acknowledgement that reaches the bit ring after its word was reused for a later lap
   * (its thread descheduled meanwhile) must not set the later event's bit: the word's tag says
   * which lap it holds.
   */
  @Test
  void aLateAcknowledgementOfAReusedRingWordSetsNothing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    int lap = 64 * FeedbackCoordinator.EVENTS_PER_WORD; // the smallest ring
    for (int t = 1; t <= 2 * lap; t++) {
      feedback.register(PgLsn.of(10L * t), 1);
      assertTrue(feedback.acknowledge(offset("slot", 10L * t, 0, 1)));
    }
    long pending = 10L * (2 * lap + 1); // position 2 * lap: the same ring word as position 0
    feedback.register(PgLsn.of(pending), 1);
    assertFalse(feedback.setBit(0), "position 0 was passed two laps ago");
    assertEquals(PgLsn.of(10L * 2 * lap), feedback.watermark());
    assertTrue(feedback.checkpoint().acknowledgedBeyond().isEmpty());
    assertTrue(feedback.acknowledge(offset("slot", pending, 0, 1)));
    assertEquals(PgLsn.of(pending), feedback.watermark());
  }

  /**
   * At a reconnect, the events of the oldest pending transaction that lie before the acknowledged
   * prefix are acknowledged whatever the bit ring holds there: a ring that grew kept only the words
   * from the prefix's on, so their bits were gone, and the transaction was registered again with
   * those events to be delivered again (and a checkpoint after the reset left them out).
   */
  @Test
  void aResetAfterTheRingGrewKeepsTheEventsBeforeThePrefix() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 100); // positions 0..99
    for (int i = 0; i < 50; i++) {
      feedback.record(offset("slot", 10, i, 100));
    }
    assertEquals(PgLsn.ZERO, feedback.watermark()); // the prefix moves to 50, into ring word 1
    feedback.register(PgLsn.of(20), 4000); // more than the 64 words of the first ring: it grows
    feedback.resetPending();
    BitSet acknowledged = new BitSet();
    acknowledged.set(0, 50);
    CdcCheckpoint checkpoint = feedback.checkpoint();
    for (int i = 0; i < 100; i++) {
      assertEquals(i < 50, checkpoint.isAcknowledged(PgLsn.of(10), i), "event " + i);
    }
    assertEquals(acknowledged, feedback.register(PgLsn.of(10), 100));
    assertNull(feedback.register(PgLsn.of(20), 4000));
  }

  /**
   * At a reconnect, the words of the oldest pending transaction before the acknowledged prefix may
   * already hold a later lap of the ring: read from there, the reset took the later lap's words for
   * the earlier ones and the retired marker ({@code -1}) for the later ones, and claimed 28 events
   * of the next transaction acknowledged that never were (so they were not delivered again).
   */
  @Test
  void aResetAfterTheRingWrappedPastTheHeadClaimsNothing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 100); // positions 0..99
    for (int i = 0; i < 50; i++) {
      feedback.record(offset("slot", 10, i, 100));
    }
    assertEquals(PgLsn.ZERO, feedback.watermark()); // the prefix moves to 50, into ring word 1
    // positions 100..3099: ring word 64 (3072..3119) reuses word 0's slot, the ring does not grow
    feedback.register(PgLsn.of(20), 3000);
    feedback.resetPending();
    CdcCheckpoint checkpoint = feedback.checkpoint();
    for (int i = 0; i < 3000; i++) {
      assertFalse(checkpoint.isAcknowledged(PgLsn.of(20), i), "event " + i + " of 0/14");
    }
    BitSet acknowledged = new BitSet();
    acknowledged.set(0, 50);
    assertEquals(acknowledged, feedback.register(PgLsn.of(10), 100));
    assertNull(feedback.register(PgLsn.of(20), 3000), "none of 0/14 was acknowledged");
  }
}
