package io.datum.cdc.store.jdbc;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.CdcHandler;
import io.datum.cdc.event.ChangeEvent;
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
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The child JVM of {@link ExactlyOnceSigkillTest}: streams slot {@code eo} into table {@code
 * eo_sink} (plain INSERT, primary key: a duplicate fails), acknowledging in the handler's
 * transaction every {@code batch} events and at the end of each source transaction.
 *
 * <p>Arguments: {@code <jdbc url> <user> <batch> <holdAt> [threads]}. With more than one handler
 * thread each thread writes and commits its own events on its own connection, at {@code batch}
 * events or at the end of its batch ({@code CdcHandler.batchEnd}). It prints {@code written <id>}
 * after each INSERT (not committed yet) and {@code committed <id>} after each commit. With {@code
 * holdAt} positive, after the {@code holdAt}-th INSERT it also writes the checkpoint row in the
 * open transaction, prints {@code holding <id>} and waits to be killed. Any failure prints {@code
 * FAILED ...} and exits with status 1. It halts when its stdin ends.
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
      run(
          args[0],
          args[1],
          Integer.parseInt(args[2]),
          Integer.parseInt(args[3]),
          args.length > 4 ? Integer.parseInt(args[4]) : 1,
          out);
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

  private static void run(
      String url, String user, int batch, int holdAt, int threads, OutputStream out)
      throws Exception {
    UrlDataSource dataSource = new UrlDataSource(url);
    TransactionalCheckpoints checkpoints =
        JdbcCheckpointStore.builder(dataSource).table("eo_checkpoint").open().transactional();
    // one connection and one batch per handler thread: each thread commits its own events
    ThreadLocal<Connection> connection =
        ThreadLocal.withInitial(
            () -> {
              try {
                Connection c = dataSource.getConnection();
                c.setAutoCommit(false);
                return c;
              } catch (java.sql.SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    ThreadLocal<List<CdcOffset>> pending = ThreadLocal.withInitial(ArrayList::new);
    AtomicInteger written = new AtomicInteger();
    PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(url)
            .user(user)
            .slot("eo")
            .publication("eo")
            .checkpointStore(checkpoints)
            .handlerThreads(threads)
            .waitForSlot(Duration.ofSeconds(30)) // the killed child's walsender may linger
            .build();
    source
        .start(
            new CdcHandler() {
              @Override
              public void handle(ChangeEvent event, CdcCheckpointHandle handle) throws Exception {
                int id = (Integer) ((InsertEvent) event).after().get("id");
                Connection c = connection.get();
                try (PreparedStatement ps = c.prepareStatement("INSERT INTO eo_sink VALUES (?)")) {
                  ps.setInt(1, id);
                  ps.executeUpdate();
                }
                List<CdcOffset> mine = pending.get();
                mine.add(event.offset());
                print(out, "written " + id);
                if (written.incrementAndGet() == holdAt) {
                  checkpoints.acknowledgeIn(c, mine);
                  print(out, "holding " + id);
                  new CountDownLatch(1).await(); // until SIGKILL
                }
                // one thread: at the transaction's end; several: at the end of each batch
                if (mine.size() >= batch
                    || (threads == 1 && event.offset().isLastInTransaction())) {
                  commit(handle);
                  print(out, "committed " + id);
                }
              }

              @Override
              public void batchEnd(CdcCheckpointHandle handle) {
                if (!pending.get().isEmpty()) {
                  commit(handle);
                }
              }

              private void commit(CdcCheckpointHandle handle) {
                checkpoints.commit(connection.get(), handle, pending.get());
                pending.get().clear();
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
