package io.datum.cdc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;

class CdcCheckpointTest {

  /** One range per index, adjacent ones merged by ofRanges; an index out of range is rejected. */
  static PartialTransaction tx(String endLsn, int count, int... acknowledged) {
    int[] ranges = new int[acknowledged.length * 2];
    for (int i = 0; i < acknowledged.length; i++) {
      ranges[2 * i] = acknowledged[i];
      ranges[2 * i + 1] = acknowledged[i] + 1;
    }
    return PartialTransaction.ofRanges(PgLsn.parse(endLsn), count, ranges);
  }

  @Test
  void atWatermarkHasNothingBeyond() {
    CdcCheckpoint c = CdcCheckpoint.atWatermark("s", PgLsn.parse("0/10"));
    assertEquals("s", c.slot());
    assertEquals(PgLsn.parse("0/10"), c.watermark());
    assertEquals(List.of(), c.acknowledgedBeyond());
  }

  @Test
  void zeroWatermarkIsAllowed() {
    CdcCheckpoint c = new CdcCheckpoint("s", PgLsn.ZERO, List.of(tx("0/1", 2, 0)));
    assertEquals(PgLsn.ZERO, c.watermark());
    assertEquals(List.of(tx("0/1", 2, 0)), c.acknowledgedBeyond());
  }

  @Test
  void acknowledgedBeyondIsSortedByEndLsnUnsigned() {
    PartialTransaction a = tx("0/20", 2, 0);
    PartialTransaction b = tx("FFFFFFFF/FFFFFFFF", 1, 0);
    PartialTransaction c = tx("80000000/0", 3, 1);
    PartialTransaction d = tx("1/0", 4, 3);
    CdcCheckpoint checkpoint = new CdcCheckpoint("s", PgLsn.parse("0/10"), List.of(b, d, a, c));
    assertEquals(List.of(a, d, c, b), checkpoint.acknowledgedBeyond());
  }

  @Test
  void acknowledgedBeyondIsCopiedAndUnmodifiable() {
    List<PartialTransaction> input = new ArrayList<>(List.of(tx("0/20", 2, 0)));
    CdcCheckpoint checkpoint = new CdcCheckpoint("s", PgLsn.parse("0/10"), input);
    input.add(tx("0/30", 1, 0));
    input.clear();
    assertEquals(List.of(tx("0/20", 2, 0)), checkpoint.acknowledgedBeyond());
    assertThrows(
        UnsupportedOperationException.class,
        () -> checkpoint.acknowledgedBeyond().add(tx("0/40", 1, 0)));
    assertEquals(1, checkpoint.acknowledgedBeyond().size());
  }

  @Test
  void transactionAtTheWatermarkIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CdcCheckpoint("s", PgLsn.parse("0/10"), List.of(tx("0/10", 2, 0))));
    assertEquals(
        "acknowledged transaction at 0/10 is not after the watermark 0/10", e.getMessage());
  }

  @Test
  void transactionBeforeTheWatermarkIsRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CdcCheckpoint(
                    "s", PgLsn.parse("0/10"), List.of(tx("0/20", 1, 0), tx("0/F", 2, 0))));
    assertEquals("acknowledged transaction at 0/F is not after the watermark 0/10", e.getMessage());
  }

  @Test
  void transactionBeforeTheWatermarkIsRejectedUnsigned() {
    // 0/1 is signed-greater than FFFFFFFF/0, but before it in WAL order
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CdcCheckpoint("s", PgLsn.parse("FFFFFFFF/0"), List.of(tx("0/1", 1, 0))));
    assertEquals(
        "acknowledged transaction at 0/1 is not after the watermark FFFFFFFF/0", e.getMessage());
  }

  @Test
  void duplicateTransactionsAreRejected() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CdcCheckpoint(
                    "s",
                    PgLsn.parse("0/10"),
                    List.of(tx("0/30", 3, 2), tx("0/20", 2, 0), tx("0/30", 3, 1))));
    assertEquals(
        "acknowledged transaction at 0/30 is not after the transaction at 0/30", e.getMessage());
  }

  @Test
  void badSlotIsRejected() {
    CdcConfigurationException e =
        assertThrows(
            CdcConfigurationException.class,
            () -> CdcCheckpoint.atWatermark("my-slot", PgLsn.ZERO));
    assertEquals(
        "invalid replication slot name \"my-slot\": PostgreSQL slot names are 1 to 63 characters"
            + " of a-z, 0-9 and _",
        e.getMessage());
  }

  @Test
  void nullsAreRejected() {
    NullPointerException watermark =
        assertThrows(NullPointerException.class, () -> new CdcCheckpoint("s", null, List.of()));
    assertEquals("watermark", watermark.getMessage());
    assertThrows(NullPointerException.class, () -> new CdcCheckpoint("s", PgLsn.ZERO, null));
  }

  @Test
  void equalsIsByValue() {
    CdcCheckpoint a = new CdcCheckpoint("s", PgLsn.parse("0/10"), List.of(tx("0/20", 3, 0, 2)));
    CdcCheckpoint b = new CdcCheckpoint("s", PgLsn.parse("0/10"), List.of(tx("0/20", 3, 0, 2)));
    assertEquals(a, b);
    assertEquals(a.hashCode(), b.hashCode());
    assertNotEquals(a, new CdcCheckpoint("s", PgLsn.parse("0/10"), List.of(tx("0/20", 3, 0))));
  }

  // ---- PartialTransaction

  @Test
  void partialTransactionAccessors() {
    PartialTransaction t = tx("0/20", 5, 0, 2, 4);
    assertEquals(PgLsn.parse("0/20"), t.txEndLsn());
    assertEquals(5, t.eventCount());
    Assertions.assertArrayEquals(new int[] {0, 1, 2, 3, 4, 5}, t.acknowledgedRanges());
    assertEquals(3, t.acknowledgedCount());
    assertTrue(t.isAcknowledged(0));
    assertFalse(t.isAcknowledged(1));
    assertTrue(t.isAcknowledged(2));
    assertFalse(t.isAcknowledged(3));
    assertTrue(t.isAcknowledged(4));
  }

  @Test
  void emptyAndFullAcknowledgementsAreAllowed() {
    PartialTransaction none = tx("0/20", 3);
    assertEquals(0, none.acknowledgedCount());
    Assertions.assertArrayEquals(new int[0], none.acknowledgedRanges());
    PartialTransaction all = tx("0/20", 3, 0, 1, 2);
    assertEquals(3, all.acknowledgedCount());
    Assertions.assertArrayEquals(new int[] {0, 3}, all.acknowledgedRanges());
  }

  @Test
  void bitAtEventCountIsRejected() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> tx("0/20", 3, 0, 3));
    assertEquals(
        "acknowledged range [3, 4) is empty or outside [0, 3) of transaction 0/20", e.getMessage());
  }

  @Test
  void bitFarBeyondEventCountIsRejected() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> tx("0/20", 1, 1000));
    assertEquals(
        "acknowledged range [1000, 1001) is empty or outside [0, 1) of transaction 0/20",
        e.getMessage());
  }

  @Test
  void eventCountBelowOneIsRejected() {
    IllegalArgumentException zero =
        assertThrows(IllegalArgumentException.class, () -> tx("0/20", 0));
    assertEquals("eventCount must be at least 1, was 0", zero.getMessage());
    IllegalArgumentException negative =
        assertThrows(IllegalArgumentException.class, () -> tx("0/20", -1));
    assertEquals("eventCount must be at least 1, was -1", negative.getMessage());
  }

  @Test
  void partialTransactionNullsAreRejected() {
    NullPointerException lsn =
        assertThrows(
            NullPointerException.class, () -> PartialTransaction.ofRanges(null, 1, new int[0]));
    assertEquals("txEndLsn", lsn.getMessage());
    assertThrows(
        NullPointerException.class, () -> PartialTransaction.ofRanges(PgLsn.parse("0/1"), 1, null));
  }

  @Test
  void partialTransactionEqualsIsByValue() {
    assertEquals(tx("0/20", 3, 1), tx("0/20", 3, 1));
    assertEquals(tx("0/20", 3, 1).hashCode(), tx("0/20", 3, 1).hashCode());
    assertNotEquals(tx("0/20", 3, 1), tx("0/20", 3, 2));
    assertNotEquals(tx("0/20", 3, 1), tx("0/20", 4, 1));
    assertNotEquals(tx("0/20", 3, 1), tx("0/21", 3, 1));
  }

  @Test
  void adjacentRangesAreMergedAndAccessorsAgree() {
    PgLsn end = PgLsn.of(0x100);
    boolean[] bits = new boolean[10];
    for (int i : new int[] {0, 1, 2, 5, 7, 8, 9}) {
      bits[i] = true;
    }
    PartialTransaction fromBits =
        PartialTransaction.ofRanges(end, 10, new int[] {0, 3, 5, 6, 7, 10});
    PartialTransaction fromRanges =
        PartialTransaction.ofRanges(end, 10, new int[] {0, 2, 2, 3, 5, 6, 7, 10});
    assertEquals(fromBits, fromRanges, "adjacent ranges are merged");
    assertEquals(fromBits.hashCode(), fromRanges.hashCode());
    Assertions.assertArrayEquals(new int[] {0, 3, 5, 6, 7, 10}, fromRanges.acknowledgedRanges());
    assertEquals(7, fromRanges.acknowledgedCount());
    for (int i = 0; i < 10; i++) {
      assertEquals(bits[i], fromRanges.isAcknowledged(i), "index " + i);
    }
    assertFalse(fromRanges.isAcknowledged(-1));
    assertFalse(fromRanges.isAcknowledged(10));
    int[] copy = fromRanges.acknowledgedRanges();
    copy[0] = 9;
    assertTrue(fromRanges.isAcknowledged(0), "the ranges are copied out");
    assertEquals(0, PartialTransaction.ofRanges(end, 1, new int[0]).acknowledgedCount());
  }

  @Test
  void aLargeTransactionAcknowledgedInOrderIsOneRange() {
    PartialTransaction tx =
        PartialTransaction.ofRanges(PgLsn.of(0x100), 2_000_000, new int[] {0, 1_999_999});
    Assertions.assertArrayEquals(new int[] {0, 1_999_999}, tx.acknowledgedRanges());
    assertTrue(tx.isAcknowledged(1_999_998));
    assertFalse(tx.isAcknowledged(1_999_999));
  }

  @Test
  void badRangesAreRefusedWithTheirBounds() {
    PgLsn end = PgLsn.of(0x100);
    for (int[] bad :
        new int[][] {{0}, {2, 2}, {3, 1}, {-1, 1}, {0, 11}, {0, 4, 3, 6}, {5, 6, 0, 1}}) {
      IllegalArgumentException e =
          assertThrows(
              IllegalArgumentException.class, () -> PartialTransaction.ofRanges(end, 10, bad));
      assertTrue(
          e.getMessage().contains("range") || e.getMessage().contains("pairs"), e.getMessage());
    }
    assertThrows(
        IllegalArgumentException.class, () -> PartialTransaction.ofRanges(end, 0, new int[0]));
    assertThrows(
        NullPointerException.class, () -> PartialTransaction.ofRanges(null, 1, new int[0]));
  }

  private static CdcCheckpoint.AcknowledgedRun run(String first, String last) {
    return new CdcCheckpoint.AcknowledgedRun(PgLsn.parse(first), PgLsn.parse(last));
  }

  @Test
  void runsAreSortedAndAnswerWhichTransactionsTheyCover() {
    CdcCheckpoint c =
        new CdcCheckpoint(
            "s",
            PgLsn.parse("0/10"),
            List.of(tx("0/80", 3, 1)),
            List.of(run("0/90", "0/A0"), run("0/20", "0/40")),
            null);
    assertEquals(List.of(run("0/20", "0/40"), run("0/90", "0/A0")), c.acknowledgedRuns());
    for (String covered : List.of("0/5", "0/10", "0/20", "0/30", "0/40", "0/90", "0/A0")) {
      assertTrue(c.coversTransaction(PgLsn.parse(covered)), covered);
      assertTrue(c.isAcknowledged(PgLsn.parse(covered), 7), covered);
    }
    for (String open : List.of("0/11", "0/41", "0/80", "0/A1", "FFFFFFFF/0")) {
      assertFalse(c.coversTransaction(PgLsn.parse(open)), open);
    }
    assertTrue(c.isAcknowledged(PgLsn.parse("0/80"), 1));
    assertFalse(c.isAcknowledged(PgLsn.parse("0/80"), 0));
    assertFalse(c.isAcknowledged(PgLsn.parse("0/50"), 0));
    assertEquals("[0/20..0/40]", run("0/20", "0/40").toString());
  }

  @Test
  void runsThatOverlapOrHoldATransactionOrReachTheWatermarkAreRejected() {
    PgLsn w = PgLsn.parse("0/10");
    IllegalArgumentException overlap =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CdcCheckpoint(
                    "s", w, List.of(), List.of(run("0/20", "0/40"), run("0/40", "0/50")), null));
    assertEquals(
        "acknowledged run [0/40..0/50] does not start after the run ending at 0/40",
        overlap.getMessage());
    IllegalArgumentException inside =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                new CdcCheckpoint(
                    "s", w, List.of(tx("0/30", 2, 0)), List.of(run("0/20", "0/40")), null));
    assertEquals(
        "acknowledged transaction at 0/30 lies inside run [0/20..0/40]", inside.getMessage());
    IllegalArgumentException atWatermark =
        assertThrows(
            IllegalArgumentException.class,
            () -> new CdcCheckpoint("s", w, List.of(), List.of(run("0/10", "0/40")), null));
    assertEquals(
        "acknowledged run [0/10..0/40] does not start after the watermark 0/10",
        atWatermark.getMessage());
    assertThrows(IllegalArgumentException.class, () -> run("0/40", "0/20"));
  }

  @Test
  void theClusterIdentityIsCheckedAndCarried() {
    ClusterIdentity id = new ClusterIdentity(-1L, 2, "app");
    assertEquals("18446744073709551615", id.systemIdentifierText());
    assertEquals("system 18446744073709551615 timeline 2 database \"app\"", id.toString());
    assertEquals(id, CdcCheckpoint.atWatermark("s", PgLsn.ZERO).withCluster(id).cluster());
    assertTrue(id.sameClusterAndDatabase(id.onTimeline(7)));
    assertFalse(id.sameClusterAndDatabase(new ClusterIdentity(-1L, 2, "other")));
    assertThrows(IllegalArgumentException.class, () -> new ClusterIdentity(1, 0, "app"));
    assertThrows(IllegalArgumentException.class, () -> new ClusterIdentity(1, 1, ""));
    assertThrows(
        IllegalArgumentException.class, () -> new ClusterIdentity(1, 1, "\u00e9".repeat(32)));
    assertEquals(63, new ClusterIdentity(1, 1, "d".repeat(63)).database().length());
  }
}
