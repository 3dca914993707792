package io.datum.cdc.store.jdbc;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.InsertEvent;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

/**
 * The child JVM of {@link ExactlyOnceSigkillTest}: streams slot {@code eo} into table {@code
 * eo_sink} (plain INSERT, primary key: a duplicate fails), acknowledging in the handler's
 * transaction every {@code batch} events and at the end of each source transaction.
 *
 * <p>Arguments: {@code <jdbc url> <user> <batch> <holdAt>}. It prints {@code written <id>} after
 * each INSERT (not committed yet) and {@code committed <id>} after each commit. With {@code holdAt}
 * positive, after the {@code holdAt}-th INSERT it also writes the checkpoint row in the open
 * transaction, prints {@code holding <id>} and waits to be killed. Any failure prints {@code FAILED
 * ...} and exits with status 1. It halts when its stdin ends.
 */
public final class ExactlyOnceChild {

  private ExactlyOnceChild() {}

  /**
   * Runs the child.
   *
   * @param args the JDBC URL, the user, the batch size, the INSERT to hold at (0: none)
   */
  public static void main(String[] args) {
    OutputStream out = new FileOutputStream(FileDescriptor.out);
    haltOnEndOfInput();
    try {
      run(args[0], args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), out);
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

  private static void run(String url, String user, int batch, int holdAt, OutputStream out)
      throws Exception {
    UrlDataSource dataSource = new UrlDataSource(url);
    TransactionalCheckpoints checkpoints =
        JdbcCheckpointStore.builder(dataSource).table("eo_checkpoint").open().transactional();
    Connection c = dataSource.getConnection();
    c.setAutoCommit(false);
    List<CdcOffset> pending = new ArrayList<>();
    int[] written = {0};
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(url)
            .user(user)
            .slot("eo")
            .publication("eo")
            .checkpointStore(checkpoints)
            .waitForSlot(Duration.ofSeconds(30)) // the killed child's walsender may linger
            .build();
    source
        .start(
            (event, handle) -> {
              int id = (Integer) ((InsertEvent) event).after().get("id");
              try (PreparedStatement ps = c.prepareStatement("INSERT INTO eo_sink VALUES (?)")) {
                ps.setInt(1, id);
                ps.executeUpdate();
              }
              pending.add(event.offset());
              print(out, "written " + id);
              if (++written[0] == holdAt) {
                checkpoints.acknowledgeIn(c, pending);
                print(out, "holding " + id);
                new CountDownLatch(1).await(); // until SIGKILL
              }
              if (pending.size() >= batch || event.offset().isLastInTransaction()) {
                checkpoints.commit(c, handle, pending);
                pending.clear();
                print(out, "committed " + id);
              }
            })
        .join();
    throw new IllegalStateException("the source stopped");
  }

  private static synchronized void print(OutputStream out, String line) throws IOException {
    out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
    out.flush();
  }

  private static void haltOnEndOfInput() {
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
  }
}
