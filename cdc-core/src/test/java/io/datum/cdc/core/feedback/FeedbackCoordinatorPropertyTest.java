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
        CdcCheckpoint snapshot = feedback.checkpoint();
        for (int t = 0; t < registered; t++) {
          for (int e = 0; e < eventCounts.get(t); e++) {
            assertEquals(
                acknowledgedIndexes[t] != null && acknowledgedIndexes[t].get(e),
                snapshot.isAcknowledged(PgLsn.of(ends[t]), e),
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

  /**
   * Acknowledge a random subset (often long stretches of whole transactions ahead of an
   * unacknowledged one), then resume: from the snapshot in a new coordinator (a restart), or in the
   * same one after {@link FeedbackCoordinator#resetPending} (a reconnect). Registering the same
   * transactions again hands back exactly the acknowledged events, snapshots taken while they are
   * registered again say exactly what the model says, and a checkpoint holds at most two entries
   * per gap in what was acknowledged, however far the acknowledgements ran ahead.
   */
  @Property(tries = 200)
  void resumingHandsBackExactlyTheAcknowledgedEventsAndCheckpointsGrowWithTheGaps(
      @ForAll @Size(min = 1, max = 300) List<@IntRange(min = 0, max = 4) Integer> eventCounts,
      @ForAll @IntRange(min = 0, max = 100) int percentAcknowledged,
      @ForAll boolean restart,
      @ForAll long seed) {
    Random random = new Random(seed);
    int n = eventCounts.size();
    long[] ends = new long[n];
    BitSet[] acked = new BitSet[n];
    FeedbackCoordinator feedback = new FeedbackCoordinator("slot", null);
    long lsn = 0x7FFF_FFFF_FFFF_F000L; // crosses the signed boundary: LSN order is unsigned
    for (int t = 0; t < n; t++) {
      lsn += 1 + random.nextInt(40);
      ends[t] = lsn;
      acked[t] = new BitSet();
      feedback.register(PgLsn.of(lsn), eventCounts.get(t));
    }
    // stretches: whole transactions acknowledged or not, with some partly acknowledged ones
    boolean stretch = random.nextBoolean();
    for (int t = 0; t < n; t++) {
      if (random.nextInt(100) >= 90) {
        stretch = random.nextInt(100) < percentAcknowledged;
      }
      int count = eventCounts.get(t);
      boolean partly = random.nextInt(10) == 0;
      for (int e = 0; e < count; e++) {
        if (partly ? random.nextBoolean() : stretch) {
          feedback.record(offset(ends, t, e, count));
          acked[t].set(e);
        }
      }
    }
    CdcCheckpoint before = feedback.checkpoint();
    assertModel(before, ends, acked, eventCounts);
    int changes = 0;
    for (int t = 1; t < n; t++) {
      boolean full = acked[t].cardinality() == eventCounts.get(t);
      boolean previousFull = acked[t - 1].cardinality() == eventCounts.get(t - 1);
      if (full != previousFull) {
        changes++;
      }
    }
    int gaps = changes;
    int entries = before.acknowledgedBeyond().size() + before.acknowledgedRuns().size();
    assertTrue(
        entries <= gaps + 1 + countPartly(acked, eventCounts),
        () -> entries + " entries for " + gaps + " changes between full and not: " + before);

    FeedbackCoordinator resumed;
    if (restart) {
      resumed = new FeedbackCoordinator("slot", before);
    } else {
      feedback.resetPending();
      resumed = feedback;
    }
    long watermark = before.watermark().asLong();
    for (int t = 0; t < n; t++) {
      if (Long.compareUnsigned(ends[t], watermark) <= 0) {
        continue;
      }
      BitSet handedBack = resumed.register(PgLsn.of(ends[t]), eventCounts.get(t));
      BitSet expected = acked[t];
      assertEquals(
          expected,
          handedBack == null ? new BitSet() : handedBack,
          "transaction " + t + " of " + n + " after " + (restart ? "a restart" : "a reconnect"));
      if (random.nextInt(8) == 0) {
        assertModel(resumed.checkpoint(), ends, acked, eventCounts);
      }
    }
    CdcCheckpoint after = resumed.checkpoint();
    assertModel(after, ends, acked, eventCounts);
    assertEquals(before.watermark(), after.watermark());
  }

  private static int countPartly(BitSet[] acked, List<Integer> eventCounts) {
    int partly = 0;
    for (int t = 0; t < acked.length; t++) {
      int c = acked[t].cardinality();
      if (c > 0 && c < eventCounts.get(t)) {
        partly++;
      }
    }
    return partly;
  }

  private static void assertModel(
      CdcCheckpoint checkpoint, long[] ends, BitSet[] acked, List<Integer> eventCounts) {
    for (int t = 0; t < ends.length; t++) {
      for (int e = 0; e < eventCounts.get(t); e++) {
        assertEquals(
            acked[t].get(e),
            checkpoint.isAcknowledged(PgLsn.of(ends[t]), e),
            "transaction " + t + " event " + e + " in " + checkpoint);
      }
    }
  }

  private static CdcOffset offset(long[] ends, int t, int e, int count) {
    return new CdcOffset("slot", PgLsn.of(ends[t]), PgLsn.of(ends[t] - 1), t, e, count);
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
