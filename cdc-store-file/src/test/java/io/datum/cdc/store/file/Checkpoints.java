package io.datum.cdc.store.file;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Stream;

/** Test helpers. */
final class Checkpoints {

  private Checkpoints() {}

  static PartialTransaction tx(String endLsn, int count, int... acknowledged) {
    BitSet bits = new BitSet();
    for (int i : acknowledged) {
      bits.set(i);
    }
    return new PartialTransaction(PgLsn.parse(endLsn), count, bits);
  }

  static CdcCheckpoint checkpoint(String slot, String watermark, PartialTransaction... txs) {
    return new CdcCheckpoint(slot, PgLsn.parse(watermark), List.of(txs));
  }

  /** The names of the directory's entries, sorted. */
  static TreeSet<String> entries(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .collect(java.util.stream.Collectors.toCollection(TreeSet::new));
    }
  }
}
