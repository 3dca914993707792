package io.datum.cdc.core;

import io.datum.cdc.TableId;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.event.DeleteEvent;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.ReadEvent;
import io.datum.cdc.event.Row;
import io.datum.cdc.event.UpdateEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;

/**
 * The child JVM of {@link ParallelSigkillTest}: streams slot {@code par_kill} with 16 handler
 * threads (KEY ordering) and a {@code file:} store (per-event durability), waiting up to 1 ms per
 * event. Prints {@code got <txEnd>#<index> <kind> <id> <v>} when the handler takes an event and
 * {@code acked <txEnd>#<index>} once its {@code acknowledge} returned (stored). Any failure prints
 * {@code FAILED ...} and exits with status 1. It halts when its stdin ends.
 *
 * <p>Arguments: {@code <jdbc url> <user> <store directory> <threads> [snapshot]}: with {@code
 * snapshot} it asks for an online snapshot of the table once started (a later child resumes it from
 * the store); read rows print {@code got <lsn>#<index> READ <id> <v>}.
 */
public final class ParallelSigkillChild {

  private ParallelSigkillChild() {}

  /**
   * Runs the child.
   *
   * @param args the JDBC URL, the user, the store directory, the handler threads
   */
  public static void main(String[] args) {
    OutputStream out = new FileOutputStream(FileDescriptor.out);
    Thread watcher =
        new Thread(
            () -> {
              try {
                while (System.in.read() >= 0) {
                  // only the end matters
                }
              } catch (IOException ignored) {
                // treat like the end
              }
              Runtime.getRuntime().halt(3);
            },
            "stdin-watcher");
    watcher.setDaemon(true);
    watcher.start();
    try (FileCheckpointStore store = FileCheckpointStore.open(Path.of(args[2]))) {
      CdcHandler handler =
          (event, checkpoints) -> {
            String at = event.offset().txEndLsn() + "#" + event.offset().eventIndex();
            print(out, "got " + at + " " + describe(event));
            LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(1_000_000));
            checkpoints.acknowledge(event.offset());
            print(out, "acked " + at);
          };
      PgCdcSource.Builder builder =
          PgCdcSource.builder()
              .jdbcUrl(args[0])
              .user(args[1])
              .slot("par_kill")
              .publication("par_kill")
              .checkpointStore(store)
              .handlerThreads(Integer.parseInt(args[3]))
              .snapshot(SnapshotMode.ON_REQUEST)
              .snapshotChunkRows(100)
              .waitForSlot(Duration.ofSeconds(30)); // the killed child's walsender may linger
      try (PgCdcSource source = builder.build()) {
        CompletableFuture<Void> done = source.start(handler);
        if (args.length > 4 && args[4].equals("snapshot")) {
          source.snapshot(new TableId("public", "par_kill"));
        }
        done.join();
      }
      throw new IllegalStateException("the source stopped");
    } catch (Throwable t) {
      t.printStackTrace();
      try {
        print(out, "FAILED " + String.valueOf(t).replaceAll("[\\r\\n]+", " "));
      } catch (IOException ignored) {
        // the parent is gone
      }
      System.exit(1);
    }
  }

  private static String describe(ChangeEvent event) {
    Row row;
    if (event instanceof InsertEvent i) {
      row = i.after();
    } else if (event instanceof UpdateEvent u) {
      row = u.after();
    } else if (event instanceof ReadEvent r) {
      row = r.after();
    } else if (event instanceof DeleteEvent d) {
      row = d.before();
    } else {
      return event.kind() + " - -";
    }
    Object v = row.has("v") && !row.isNull(row.indexOf("v")) ? row.get("v") : "-";
    return event.kind() + " " + row.get("id") + " " + v;
  }

  private static synchronized void print(OutputStream out, String line) throws IOException {
    out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }
}
