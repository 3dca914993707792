package io.datum.cdc.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.PgLsn;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Checkpoint factories, assertions and file helpers of the conformance kit. */
final class KitFixtures {

  private KitFixtures() {}

  /** A partial transaction at {@code txEndLsn} ({@code X/X}) with the given events acknowledged. */
  static PartialTransaction tx(String txEndLsn, int eventCount, int... acknowledged) {
    return Checkpoints.partial(PgLsn.parse(txEndLsn), eventCount, acknowledged);
  }

  /** A checkpoint of {@code slot} at {@code watermark} ({@code X/X}). */
  static CdcCheckpoint at(String slot, String watermark, PartialTransaction... beyond) {
    return new CdcCheckpoint(slot, PgLsn.parse(watermark), List.of(beyond));
  }

  static void assertLoads(CdcCheckpointStore store, CdcCheckpoint expected) {
    assertEquals(
        Optional.of(expected), store.load(expected.slot()), "load(\"" + expected.slot() + "\")");
  }

  /** Asserts that the exception's message names {@code directory} or a path under it. */
  static void assertNames(Path directory, Throwable e) {
    assertNames(
        directory, "the message of " + e.getClass().getName(), String.valueOf(e.getMessage()), e);
  }

  /**
   * Asserts that {@code text} names {@code directory} or a path under it, in one of the forms a
   * store might print: as given, as a {@code file:} URI path, or as the real path.
   */
  static void assertNames(Path directory, String what, String text, Throwable cause) {
    List<String> forms =
        new ArrayList<>(List.of(directory.toString(), directory.toUri().getRawPath()));
    try {
      forms.add(directory.toRealPath().toString());
    } catch (IOException ignored) {
      // the directory is gone; the other forms remain
    }
    for (String form : forms) {
      String bare = form.endsWith("/") ? form.substring(0, form.length() - 1) : form;
      if (text.contains(bare)) {
        return;
      }
    }
    throw new AssertionError(
        what + " does not name the store's directory " + directory + " or a path under it: " + text,
        cause);
  }

  /** Lists the files under {@code root} with their sizes, for failure messages. */
  static String listing(Path root) throws IOException {
    try (Stream<Path> all = Files.walk(root)) {
      return all.map(
              p -> root.relativize(p) + (Files.isRegularFile(p) ? " (" + size(p) + " bytes)" : "/"))
          .collect(Collectors.joining(", ", "[", "]"));
    }
  }

  /** Overwrites every regular file under {@code directory} but lock files with {@code value}. */
  static void overwriteFiles(Path directory, byte value) throws IOException {
    List<Path> files;
    try (Stream<Path> all = Files.walk(directory)) {
      files =
          all.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
              .collect(Collectors.toList());
    }
    byte[] junk = new byte[64 * 1024];
    Arrays.fill(junk, value);
    for (Path file : files) {
      String name = file.getFileName().toString();
      if (name.endsWith(".lock") || name.equals("LOCK")) {
        continue;
      }
      try (FileChannel channel = FileChannel.open(file, StandardOpenOption.WRITE)) {
        long size = channel.size();
        for (long at = 0; at < size; ) {
          at += channel.write(ByteBuffer.wrap(junk, 0, (int) Math.min(junk.length, size - at)), at);
        }
        channel.force(true);
      }
    }
  }

  private static long size(Path file) {
    try {
      return Files.size(file);
    } catch (IOException e) {
      return -1;
    }
  }
}
