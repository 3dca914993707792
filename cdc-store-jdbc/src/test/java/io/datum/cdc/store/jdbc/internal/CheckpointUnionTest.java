package io.datum.cdc.store.jdbc.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.AcknowledgedRun;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.ClusterIdentity;
import io.datum.cdc.PgLsn;
import java.util.List;
import org.junit.jupiter.api.Test;

class CheckpointUnionTest {

  private static PgLsn lsn(String text) {
    return PgLsn.parse(text);
  }

  private static AcknowledgedRun run(String first, String last) {
    return new AcknowledgedRun(lsn(first), lsn(last));
  }

  private static CdcOffset offset(String end, int index, int count) {
    return new CdcOffset("s", lsn(end), lsn(end), 7, index, count);
  }

  private static CdcCheckpoint checkpoint(
      String watermark, List<PartialTransaction> partial, List<AcknowledgedRun> runs) {
    return new CdcCheckpoint("s", lsn(watermark), partial, runs, null);
  }

  @Test
  void nothingAddedIsTheZeroCheckpoint() {
    assertEquals(
        CdcCheckpoint.atWatermark("s", PgLsn.ZERO), new CheckpointUnion("s").toCheckpoint());
  }

  @Test
  void theHigherWatermarkWinsAndDropsWhatItCovers() {
    CdcCheckpoint older =
        checkpoint(
            "0/10",
            List.of(PartialTransaction.ofRanges(lsn("0/20"), 3, new int[] {0, 1})),
            List.of(run("0/30", "0/40"), run("0/60", "0/70")));
    CdcCheckpoint newer = CdcCheckpoint.atWatermark("s", lsn("0/50"));
    assertEquals(
        checkpoint("0/50", List.of(), List.of(run("0/60", "0/70"))),
        new CheckpointUnion("s").add(older).add(newer).toCheckpoint());
    assertEquals(
        checkpoint("0/50", List.of(), List.of(run("0/60", "0/70"))),
        new CheckpointUnion("s").add(newer).add(older).toCheckpoint(),
        "either order");
  }

  @Test
  void aRunStraddlingTheWatermarkMovesIt() {
    CdcCheckpoint row = checkpoint("0/10", List.of(), List.of(run("0/30", "0/80")));
    assertEquals(
        CdcCheckpoint.atWatermark("s", lsn("0/80")),
        new CheckpointUnion("s")
            .add(row)
            .add(CdcCheckpoint.atWatermark("s", lsn("0/40")))
            .toCheckpoint());
  }

  @Test
  void overlappingAndAdjacentRunsMerge() {
    CdcCheckpoint a =
        checkpoint("0/10", List.of(), List.of(run("0/20", "0/30"), run("0/90", "0/90")));
    CdcCheckpoint b =
        checkpoint("0/10", List.of(), List.of(run("0/25", "0/40"), run("0/41", "0/50")));
    assertEquals(
        checkpoint("0/10", List.of(), List.of(run("0/20", "0/50"), run("0/90", "0/90"))),
        new CheckpointUnion("s").add(a).add(b).toCheckpoint());
  }

  @Test
  void eventsOfOneTransactionAccumulateIntoARunOfOne() {
    CheckpointUnion union =
        new CheckpointUnion("s").add(CdcCheckpoint.atWatermark("s", lsn("0/10")));
    union.add(offset("0/20", 2, 3)).add(offset("0/20", 0, 3));
    assertEquals(
        checkpoint(
            "0/10",
            List.of(PartialTransaction.ofRanges(lsn("0/20"), 3, new int[] {0, 1, 2, 3})),
            List.of()),
        union.toCheckpoint());
    union.add(offset("0/20", 1, 3));
    assertEquals(checkpoint("0/10", List.of(), List.of(run("0/20", "0/20"))), union.toCheckpoint());
  }

  @Test
  void aPartialInsideARunOrBehindTheWatermarkIsDropped() {
    CdcCheckpoint row = checkpoint("0/10", List.of(), List.of(run("0/20", "0/40")));
    assertEquals(
        row,
        new CheckpointUnion("s")
            .add(row)
            .add(offset("0/30", 0, 5))
            .add(offset("0/5", 1, 2))
            .toCheckpoint());
  }

  @Test
  void theLastCheckpointAddedGivesTheMetadata() {
    ClusterIdentity cluster = new ClusterIdentity(42, 1, "postgres");
    CdcCheckpoint source =
        CdcCheckpoint.atWatermark("s", lsn("0/10")).withCluster(cluster).withPublication("pub");
    CdcCheckpoint union =
        new CheckpointUnion("s").add(source).add(offset("0/20", 0, 2)).toCheckpoint();
    assertEquals(cluster, union.cluster());
    assertEquals("pub", union.publication());
  }

  @Test
  void mismatchesAreRefused() {
    CheckpointUnion union = new CheckpointUnion("s").add(offset("0/20", 0, 2));
    assertThrows(IllegalArgumentException.class, () -> union.add(offset("0/20", 0, 3)));
    assertThrows(
        IllegalArgumentException.class,
        () -> union.add(CdcCheckpoint.atWatermark("other", lsn("0/10"))));
    assertThrows(
        IllegalArgumentException.class,
        () -> union.add(new CdcOffset("s", lsn("0/30"), lsn("0/30"), 0, 0, 1, 5)));
  }
}
