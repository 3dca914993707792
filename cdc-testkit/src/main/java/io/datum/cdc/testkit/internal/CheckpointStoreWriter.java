package io.datum.cdc.testkit.internal;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.CdcCheckpoint.PartialTransaction;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.PgLsn;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * The child process of the conformance kit's crash tests. Not API.
 *
 * <p>{@code write <uri> <slot>} opens {@link CheckpointStores#open(String) the store}, continues
 * after the slot's stored watermark ({@code n = watermark + 1}, or 1) and stores {@link
 * #checkpoint(String, long) checkpoint(slot, n)} for ever larger {@code n}, writing {@code "stored
 * <n>\n"} to stdout in one write after each {@code store} returns, until it is killed. {@code open
 * <uri>} opens the store, closes it and prints {@code OPENED}.
 *
 * <p>Any failure prints {@code FAILED <exception class>: <message>} on one line and exits with
 * status 1. The process halts when its stdin reaches end of file, so it never outlives the test JVM
 * that started it.
 */
public final class CheckpointStoreWriter {

  /** The most checkpoints one {@code write} run stores before it exits on its own. */
  static final long MAX_STORES = 10_000_000;

  private CheckpointStoreWriter() {}

  /**
   * Returns the checkpoint the writer stores for {@code n}: watermark {@code n}, plus one partial
   * transaction at {@code n + 1} whose event count ({@code n % 7 + 1}) and acknowledged events (bit
   * {@code i} set if bit {@code i} of {@code n / 7} is, and always event 0) derive from {@code n},
   * so a mix of two checkpoints is detected by {@link #isWellFormed}.
   *
   * @param slot a valid slot name
   * @param n at least 0
   * @return the checkpoint
   */
  public static CdcCheckpoint checkpoint(String slot, long n) {
    int eventCount = (int) (n % 7) + 1;
    // event 0, and event i where bit i of n / 7 is set: as runs of consecutive indexes
    int[] ranges = new int[2 * eventCount];
    int k = 0;
    for (int i = 0; i < eventCount; i++) {
      if (i == 0 || ((n / 7) >>> i & 1) == 1) {
        if (k > 0 && ranges[k - 1] == i) {
          ranges[k - 1] = i + 1;
        } else {
          ranges[k++] = i;
          ranges[k++] = i + 1;
        }
      }
    }
    return new CdcCheckpoint(
        slot,
        PgLsn.of(n),
        List.of(
            PartialTransaction.ofRanges(PgLsn.of(n + 1), eventCount, Arrays.copyOf(ranges, k))));
  }

  /**
   * Returns whether {@code loaded} is exactly {@code checkpoint(slot, n)} for its own watermark n.
   *
   * @param loaded a loaded checkpoint
   * @return true if it is self-consistent
   */
  public static boolean isWellFormed(CdcCheckpoint loaded) {
    return loaded.equals(checkpoint(loaded.slot(), loaded.watermark().asLong()));
  }

  /**
   * Runs the child; see the class description.
   *
   * @param args {@code write <uri> <slot>} or {@code open <uri>}
   */
  public static void main(String[] args) {
    OutputStream out = new FileOutputStream(FileDescriptor.out);
    haltOnEndOfInput();
    try {
      if (args.length == 3 && args[0].equals("write")) {
        write(args[1], args[2], out);
      } else if (args.length == 2 && args[0].equals("open")) {
        CheckpointStores.open(args[1]).close();
        print(out, "OPENED");
      } else {
        throw new IllegalArgumentException(
            "usage: CheckpointStoreWriter write <uri> <slot> | open <uri>");
      }
      System.exit(0);
    } catch (Throwable t) {
      t.printStackTrace();
      String message = String.valueOf(t.getMessage()).replaceAll("[\\r\\n]+", " ");
      try {
        print(out, "FAILED " + t.getClass().getName() + ": " + message);
      } catch (IOException ignored) {
        // the parent is gone; the exit status is all that is left
      }
      System.exit(1);
    }
  }

  private static void write(String uri, String slot, OutputStream out) throws IOException {
    try (CdcCheckpointStore store = CheckpointStores.open(uri)) {
      Optional<CdcCheckpoint> previous = store.load(slot);
      long first = previous.map(c -> c.watermark().asLong() + 1).orElse(1L);
      for (long n = first; n < first + MAX_STORES; n++) {
        store.store(checkpoint(slot, n));
        print(out, "stored " + n);
      }
    }
  }

  /** Writes one line in a single write, so a kill never leaves half a line. */
  private static void print(OutputStream out, String line) throws IOException {
    out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private static void haltOnEndOfInput() {
    Thread watcher =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {
                  // ignore input; only its end matters
                }
              } catch (IOException ignored) {
                // treat like end of input
              }
              Runtime.getRuntime().halt(3);
            },
            "stdin-watcher");
    watcher.setDaemon(true);
    watcher.start();
  }
}
