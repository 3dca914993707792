package io.datum.cdc.core.feedback;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.Size;

/**
 * For random transactions and random acknowledgement orders, the watermark always equals the end
 * LSN of the longest fully acknowledged prefix of transactions, computed here the obvious way.
 */
class FeedbackCoordinatorPropertyTest {

  @Property(tries = 300)
  void watermarkIsTheEndOfTheLongestFullyAcknowledgedPrefix(
      @ForAll @Size(min = 1, max = 30) List<@IntRange(min = 0, max = 6) Integer> eventCounts,
      @ForAll long seed) {
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    long[] ends = new long[eventCounts.size()];
    List<CdcOffset> offsets = new ArrayList<>();
    long lsn = 0x1_0000_0000L; // above 4 GiB: LSNs are 64-bit
    for (int t = 0; t < eventCounts.size(); t++) {
      lsn += 17 + t;
      ends[t] = lsn;
      int count = eventCounts.get(t);
      feedback.register(PgLsn.of(lsn), count);
      for (int i = 0; i < count; i++) {
        offsets.add(new CdcOffset("slot", PgLsn.of(lsn), PgLsn.of(lsn - 8), t, i, count));
      }
    }
    Collections.shuffle(offsets, new Random(seed));
    int[] acknowledged = new int[eventCounts.size()];
    assertEquals(PgLsn.of(expected(eventCounts, acknowledged, ends)), feedback.watermark());
    for (CdcOffset offset : offsets) {
      feedback.acknowledge(offset);
      int t = (int) offset.xid();
      acknowledged[t]++;
      if (offset.eventIndex() % 2 == 0) {
        feedback.acknowledge(offset); // duplicates change nothing
      }
      assertEquals(PgLsn.of(expected(eventCounts, acknowledged, ends)), feedback.watermark());
    }
    assertEquals(PgLsn.of(ends[ends.length - 1]), feedback.watermark());
  }

  /**
   * A long stream: transactions are registered while earlier ones are acknowledged in a shuffled
   * window, so the rings wrap around and grow.
   */
  @Property(tries = 60)
  void watermarkFollowsTheModelOverALongInterleavedStream(
      @ForAll @Size(min = 50, max = 400) List<@IntRange(min = 0, max = 300) Integer> eventCounts,
      @ForAll @IntRange(min = 1, max = 2000) int window,
      @ForAll long seed) {
    Random random = new Random(seed);
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    long[] ends = new long[eventCounts.size()];
    int[] acknowledged = new int[eventCounts.size()];
    BitSet[] acknowledgedIndexes = new BitSet[eventCounts.size()];
    List<CdcOffset> inFlight = new ArrayList<>();
    long lsn = 0xFFFF_FFFF_0000_0000L; // crosses the signed boundary: LSN order is unsigned
    int registered = 0;
    while (registered < eventCounts.size() || !inFlight.isEmpty()) {
      while (registered < eventCounts.size() && inFlight.size() < window) {
        lsn += 1 + random.nextInt(100);
        ends[registered] = lsn;
        int count = eventCounts.get(registered);
        feedback.register(PgLsn.of(lsn), count);
        for (int i = 0; i < count; i++) {
          inFlight.add(
              new CdcOffset("slot", PgLsn.of(lsn), PgLsn.of(lsn - 1), registered, i, count));
        }
        registered++;
      }
      if (inFlight.isEmpty()) {
        continue;
      }
      CdcOffset offset = inFlight.remove(random.nextInt(inFlight.size()));
      feedback.acknowledge(offset);
      int tx = (int) offset.xid();
      acknowledged[tx]++;
      if (acknowledgedIndexes[tx] == null) {
        acknowledgedIndexes[tx] = new BitSet();
      }
      acknowledgedIndexes[tx].set(offset.eventIndex());
      assertEquals(
          PgLsn.of(expectedPrefix(eventCounts, acknowledged, ends, registered)),
          feedback.watermark());
      if (random.nextInt(50) == 0) { // the snapshot holds exactly the acknowledged events beyond
        for (CdcCheckpoint.PartialTransaction partial : feedback.snapshot().acknowledgedBeyond()) {
          int t = Arrays.binarySearch(ends, 0, registered, partial.txEndLsn().asLong());
          for (int e = 0; e < partial.eventCount(); e++) {
            assertEquals(
                acknowledgedIndexes[t].get(e),
                partial.isAcknowledged(e),
                "transaction " + t + " event " + e);
          }
        }
      }
    }
    assertEquals(PgLsn.of(ends[ends.length - 1]), feedback.watermark());
    assertEquals(0, feedback.pendingTransactions());
  }

  private static long expectedPrefix(
      List<Integer> counts, int[] acknowledged, long[] ends, int registered) {
    long watermark = 0;
    for (int t = 0; t < registered; t++) {
      if (acknowledged[t] < counts.get(t)) {
        break;
      }
      watermark = ends[t];
    }
    return watermark;
  }

  private static long expected(List<Integer> counts, int[] acknowledged, long[] ends) {
    long watermark = 0;
    for (int t = 0; t < counts.size(); t++) {
      if (acknowledged[t] < counts.get(t)) {
        break;
      }
      watermark = ends[t];
    }
    return watermark;
  }
}
