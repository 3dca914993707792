package io.datum.cdc.store.mapdb;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.PgLsn;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.List;
import java.util.TreeSet;
import java.util.stream.Collectors;
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

  /**
   * A checkpoint derived from {@code n}, so that a mix of two is recognisable: watermark n, one
   * partial transaction at n + 1 with n % 5 + 1 events, event 0 and event n % (count) acknowledged.
   */
  static CdcCheckpoint numbered(String slot, long n) {
    int count = (int) (n % 5) + 1;
    BitSet bits = new BitSet();
    bits.set(0);
    bits.set((int) (n % count));
    return new CdcCheckpoint(
        slot, PgLsn.of(n), List.of(new PartialTransaction(PgLsn.of(n + 1), count, bits)));
  }

  /** The names of the directory's entries, sorted. */
  static TreeSet<String> entries(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files
          .map(p -> p.getFileName().toString())
          .collect(Collectors.toCollection(TreeSet::new));
    }
  }

  /** Starts {@code java -cp <our class path> mainClass args...}; stderr goes to ours. */
  static Process child(Class<?> mainClass, String... args) throws IOException {
    List<String> command = new java.util.ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-cp");
    command.add(System.getProperty("java.class.path"));
    command.add(mainClass.getName());
    command.addAll(List.of(args));
    return new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start();
  }

  static BufferedReader reader(Process process) {
    return new BufferedReader(
        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
  }
}
