package io.datum.cdc.store.mapdb;

import io.datum.cdc.store.mapdb.MapDbCheckpointStore.Options;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link CrashRecoveryTest}: {@code <file> <transactions> <point> <n> [mmap]}
 * stores {@link Checkpoints#numbered} 1 of slots a, b and c, prints {@code STORED 1}, then stores
 * number 2 of slot a and halts the JVM (no shutdown hooks, no close: like SIGKILL) at crash point
 * {@code point} of that commit: {@code redo} (after the redo log is durable), {@code page} (before
 * page n is written into the file) or {@code sync} (after all pages were written, before the file
 * is synced). Prints {@code NOT_REACHED} if the point was not reached. With {@code mmap}, the file
 * is memory-mapped.
 */
public final class CrashChild {

  private CrashChild() {}

  public static void main(String[] args) {
    Path file = Path.of(args[0]);
    boolean transactions = Boolean.parseBoolean(args[1]);
    String point = args[2];
    int page = Integer.parseInt(args[3]);
    boolean[] armed = {false};
    PagedVolume.CommitHooks hooks =
        new PagedVolume.CommitHooks() {
          @Override
          public void redoWritten() {
            crashIf(armed[0] && point.equals("redo"));
          }

          @Override
          public void beforePageWrite(int n) {
            crashIf(armed[0] && point.equals("page") && n == page);
          }

          @Override
          public void beforeFileSync() {
            crashIf(armed[0] && point.equals("sync"));
          }
        };
    Options options = new Options(transactions, args.length > 4 && args[4].equals("mmap"));
    MapDbCheckpointStore store = MapDbCheckpointStore.open(file, options, hooks);
    for (String slot : new String[] {"a", "b", "c"}) {
      store.store(Checkpoints.numbered(slot, 1));
    }
    System.out.println("STORED 1");
    System.out.flush();
    armed[0] = true;
    store.store(Checkpoints.numbered("a", 2));
    System.out.println("NOT_REACHED");
    System.out.flush();
    Runtime.getRuntime().halt(0);
  }

  private static void crashIf(boolean crash) {
    if (crash) {
      System.out.flush();
      Runtime.getRuntime().halt(137);
    }
  }
}
