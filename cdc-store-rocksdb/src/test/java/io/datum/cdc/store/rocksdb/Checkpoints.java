package io.datum.cdc.store.rocksdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.util.List;

/** Test helpers. */
final class Checkpoints {

  private Checkpoints() {}

  static PartialTransaction tx(String endLsn, int count, int... acknowledged) {
    return io.datum.cdc.testkit.Checkpoints.partial(PgLsn.parse(endLsn), count, acknowledged);
  }

  static CdcCheckpoint checkpoint(String slot, String watermark, PartialTransaction... txs) {
    return new CdcCheckpoint(slot, PgLsn.parse(watermark), List.of(txs));
  }

  /** A checkpoint with partial transactions, including the largest LSN. */
  static CdcCheckpoint rich(String slot) {
    return new CdcCheckpoint(
        slot,
        PgLsn.parse("16/B374D848"),
        List.of(
            tx("16/B374D900", 5, 0, 2, 3),
            tx("16/B3750000", 1, 0),
            tx("17/0", 3),
            PartialTransaction.ofRanges(
                PgLsn.parse("7FFFFFFF/FFFFFFFF"),
                100_000,
                new int[] {0, 1000, 1500, 70_000, 99_999, 100_000}),
            tx("FFFFFFFF/FFFFFFFF", Integer.MAX_VALUE, 0, 1_000_000, 1_000_001)));
  }
}
