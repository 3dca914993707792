package io.datum.cdc.cli;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.cli.json.JsonLinesWriter;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.ChangeEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.testkit.EmbeddedPostgresServer;
import java.io.BufferedOutputStream;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code pgcdc demo}: starts an embedded PostgreSQL, creates a small schema, runs a scripted
 * workload, streams it as JSON lines with a file checkpoint store, stops the source abruptly in
 * the middle of a large transaction, writes more changes while it is down, and resumes with a new
 * source on the same slot and store. Narration and the summary go to stderr; stdout holds only
 * JSON lines.
 */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    description = "Stream a scripted workload of an embedded PostgreSQL, with a kill and a resume.")
final class DemoCommand implements Callable<Integer> {

  private static final String SLOT = "pgcdc_demo";
  private static final int LARGE_TRANSACTION_ROWS = 200;
  /** The first source is stopped after printing this many events of the large transaction. */
  private static final int PRINTED_BEFORE_KILL = 5;

  @Option(names = "--verbose", description = "print stack traces of errors")
  boolean verbose;

  @Option(names = "--idle-exit", paramLabel = "SECONDS", defaultValue = "2",
      description = "after the workload, stop once no change arrived for SECONDS (default ${DEFAULT-VALUE})")
  double idleExitSeconds;

  private final PrintStream err = System.err;

  @Override
  public Integer call() throws Exception {
    JsonLinesWriter out =
        new JsonLinesWriter(new BufferedOutputStream(new FileOutputStream(FileDescriptor.out), 1 << 16));
    Path storeDir = Files.createTempDirectory("pgcdc-demo-store");
    err.println("pgcdc demo: starting an embedded PostgreSQL 17 (wal_level=logical)...");
    try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.builder().start()) {
      DemoWorkload workload = new DemoWorkload(pg);
      workload.createSchema();
      err.println("pgcdc demo: schema ready (customers, orders, audit_log; publication " + SLOT
          + "); checkpoints in file:" + storeDir);

      Set<String> printed = new HashSet<>();
      AtomicLong events = new AtomicLong();
      AtomicLong redelivered = new AtomicLong();
      Set<String> transactions = new HashSet<>();

      // First source: prints and acknowledges everything until the middle of the large transaction.
      CountDownLatch killPoint = new CountDownLatch(1);
      try (FileCheckpointStore store = FileCheckpointStore.open(storeDir);
          PgCdcSource source = source(pg, store, true)) {
        source.start((event, checkpoints) -> {
          if (killPoint.getCount() == 0) {
            return; // "dead": nothing more is processed or acknowledged
          }
          print(out, event, printed, events, redelivered, transactions);
          if (event.offset().eventCount() == LARGE_TRANSACTION_ROWS
              && event.offset().eventIndex() == PRINTED_BEFORE_KILL - 1) {
            killPoint.countDown(); // printed, never acknowledged
            return;
          }
          checkpoints.checkpoint(event.offset());
        });
        workload.runBeforeKill(LARGE_TRANSACTION_ROWS);
        if (!killPoint.await(60, TimeUnit.SECONDS)) {
          throw new IllegalStateException("the large transaction did not arrive within 60 s");
        }
        err.println("pgcdc demo: killing the source after " + events.get() + " events, "
            + PRINTED_BEFORE_KILL + " of them from the unfinished large transaction;"
            + " stored watermark " + source.watermark());
      }

      workload.runWhileDown();
      err.println("pgcdc demo: wrote more changes while no source runs; restarting on the same slot and store");

      // Second source: resumes at the stored watermark and runs until the stream is idle.
      AtomicLong lastEvent = new AtomicLong(System.nanoTime());
      String finalWatermark;
      try (FileCheckpointStore store = FileCheckpointStore.open(storeDir);
          PgCdcSource source = source(pg, store, false)) {
        var done = source.start((ChangeEvent event, CdcCheckpointHandle checkpoints) -> {
          print(out, event, printed, events, redelivered, transactions);
          checkpoints.checkpoint(event.offset());
          lastEvent.set(System.nanoTime());
        });
        workload.runAfterRestart();
        long idleNanos = (long) (idleExitSeconds * 1e9);
        while (!done.isDone() && System.nanoTime() - lastEvent.get() < idleNanos) {
          done.completeOnTimeout(null, 100, TimeUnit.MILLISECONDS).join();
          if (done.isDone()) {
            break;
          }
        }
        source.stop();
        done.join();
        finalWatermark = source.watermark().toString();
      }
      String confirmed = pg.queryString(
          "SELECT confirmed_flush_lsn::text FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'");
      err.println("pgcdc demo: " + events.get() + " events in " + transactions.size()
          + " transactions, " + redelivered.get() + " delivered again after the kill (printed but"
          + " not acknowledged), final watermark " + finalWatermark
          + " (slot confirmed_flush_lsn " + confirmed + ")");
    } finally {
      deleteTree(storeDir);
    }
    return 0;
  }

  private static PgCdcSource source(EmbeddedPostgresServer pg, FileCheckpointStore store, boolean create) {
    return PgCdcSource.builder()
        .jdbcUrl(pg.jdbcUrl())
        .user(pg.user())
        .slot(SLOT)
        .publication(SLOT)
        .checkpointStore(store)
        .createSlot(create)
        .build();
  }

  private static void print(JsonLinesWriter out, ChangeEvent event, Set<String> printed,
      AtomicLong events, AtomicLong redelivered, Set<String> transactions) {
    out.write(event);
    out.flush();
    events.incrementAndGet();
    transactions.add(event.offset().txEndLsn().toString());
    if (!printed.add(event.offset().txEndLsn() + "#" + event.offset().eventIndex())) {
      redelivered.incrementAndGet();
    }
  }

  private static void deleteTree(Path dir) throws java.io.IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }
}
