package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import org.junit.jupiter.api.Test;

/** The figures the coordinator gives the source's metrics: events acknowledged, oldest commit. */
class FeedbackCoordinatorFiguresTest {

  private static CdcOffset offset(long tx, int index, int count) {
    return new CdcOffset("slot", PgLsn.of(tx), PgLsn.of(tx - 1), 7, index, count);
  }

  @Test
  void eventsAreCountedWhenTheWatermarkPassesTheirTransaction() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 3, 1_000);
    feedback.register(PgLsn.of(20), 2, 2_000);
    feedback.register(PgLsn.of(30), 0, 3_000); // completes with the one before
    feedback.acknowledge(offset(20, 0, 2));
    feedback.acknowledge(offset(20, 1, 2));
    assertEquals(0, feedback.eventsAcknowledged(), "20 waits for 10");
    feedback.acknowledge(offset(10, 0, 3));
    feedback.acknowledge(offset(10, 2, 3));
    assertEquals(0, feedback.eventsAcknowledged(), "10 is not complete");
    feedback.acknowledge(offset(10, 1, 3));
    assertEquals(5, feedback.eventsAcknowledged());
    assertEquals(PgLsn.of(30), feedback.watermark());
    feedback.acknowledge(offset(10, 1, 3)); // again: behind the watermark
    assertEquals(5, feedback.eventsAcknowledged());
    feedback.register(PgLsn.of(40), 4, 4_000);
    feedback.acknowledgeTransaction(offset(40, 0, 4));
    assertEquals(9, feedback.eventsAcknowledged());
  }

  @Test
  void theOldestPendingCommitIsTheOneTheWatermarkWaitsFor() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    assertEquals(Long.MIN_VALUE, feedback.oldestPendingCommitMicros(), "nothing registered");
    feedback.register(PgLsn.of(10), 1, 1_000);
    feedback.register(PgLsn.of(20), 1, 2_000);
    assertEquals(1_000, feedback.oldestPendingCommitMicros());
    feedback.acknowledge(offset(20, 0, 1));
    assertEquals(1_000, feedback.oldestPendingCommitMicros(), "20 acknowledged, 10 not");
    feedback.acknowledge(offset(10, 0, 1));
    assertEquals(Long.MIN_VALUE, feedback.oldestPendingCommitMicros(), "all behind");
    feedback.register(PgLsn.of(30), 1);
    assertEquals(0, feedback.oldestPendingCommitMicros(), "registered without a commit time");
  }

  @Test
  void commitTimesSurviveTheRingGrowing() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    for (int i = 1; i <= 500; i++) { // more than the first ring's 64 entries
      feedback.register(PgLsn.of(i * 10L), 1, i * 1_000L);
    }
    for (int i = 1; i <= 300; i++) {
      feedback.acknowledge(offset(i * 10L, 0, 1));
    }
    assertEquals(301_000, feedback.oldestPendingCommitMicros());
    assertEquals(300, feedback.eventsAcknowledged());
  }

  @Test
  void afterAResetTheRedeliveredTransactionsAreCountedOnce() {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    feedback.register(PgLsn.of(10), 2, 1_000);
    feedback.register(PgLsn.of(20), 1, 2_000);
    feedback.acknowledge(offset(10, 0, 2));
    feedback.acknowledge(offset(20, 0, 1));
    feedback.resetPending(); // connection lost: both are sent again
    assertEquals(Long.MIN_VALUE, feedback.oldestPendingCommitMicros());
    feedback.register(PgLsn.of(10), 2, 1_000);
    feedback.register(PgLsn.of(20), 1, 2_000);
    assertEquals(1_000, feedback.oldestPendingCommitMicros());
    feedback.acknowledge(offset(10, 1, 2));
    assertEquals(3, feedback.eventsAcknowledged());
    assertEquals(PgLsn.of(20), feedback.watermark());
  }
}
