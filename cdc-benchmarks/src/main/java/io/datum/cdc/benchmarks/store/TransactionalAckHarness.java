package io.datum.cdc.benchmarks.store;

import io.datum.cdc.CdcCheckpointHandle;
import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CdcOffset;
import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.store.file.FileCheckpointStore;
import io.datum.cdc.store.jdbc.JdbcCheckpointStore;
import io.datum.cdc.store.jdbc.TransactionalCheckpoints;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The cost of acknowledging in the handler's transaction (docs/benchmarks.md, "Transactional
 * checkpoints"): a handler inserts each event into a table of the same database and commits every N
 * events, in three variants:
 *
 * <ul>
 *   <li>{@code none}: plain INSERT, commit, acknowledgements to a {@code memory:} store: no durable
 *       checkpoint at all, the floor;
 *   <li>{@code transactional}: plain INSERT, the checkpoint row written in the same transaction
 *       ({@link TransactionalCheckpoints#commit}); the source with per-transaction durability, as
 *       its own writes only compact the row;
 *   <li>{@code upsert-file}: idempotent upsert, commit, then durable acknowledgements to a {@code
 *       file:} store (asynchronous, combined, awaited per batch): at-least-once made safe by the
 *       upsert.
 * </ul>
 *
 * <p>The rows are written (in source transactions of 1,000) before the source starts; events/s is
 * measured from the first event handled to the last commit. {@code --events 20000 --runs 3
 * --batches 1,100,1000 --variants none,transactional,upsert-file --out results.json}.
 */
public final class TransactionalAckHarness {

  private final EmbeddedPostgresServer pg;
  private final Path tmp;
  private int slots;

  private TransactionalAckHarness(EmbeddedPostgresServer pg, Path tmp) {
    this.pg = pg;
    this.tmp = tmp;
  }

  /**
   * Runs the measurements.
   *
   * @param args see the class description
   * @throws Exception if the server cannot start or a run fails
   */
  public static void main(String[] args) throws Exception {
    int events = 20_000;
    int runs = 3;
    List<Integer> batches = List.of(1, 100, 1000);
    List<String> variants = List.of("none", "transactional", "upsert-file");
    String out = null;
    for (int i = 0; i < args.length; i += 2) {
      switch (args[i]) {
        case "--events" -> events = Integer.parseInt(args[i + 1]);
        case "--runs" -> runs = Integer.parseInt(args[i + 1]);
        case "--batches" ->
            batches = List.of(args[i + 1].split(",")).stream().map(Integer::valueOf).toList();
        case "--variants" -> variants = List.of(args[i + 1].split(","));
        case "--out" -> out = args[i + 1];
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    List<String> results = new ArrayList<>();
    try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.builder().start()) {
      TransactionalAckHarness h =
          new TransactionalAckHarness(pg, Files.createTempDirectory("tx-ack-bench"));
      pg.execute(
          "CREATE TABLE bench_src (id int PRIMARY KEY, note text)",
          "CREATE PUBLICATION bench FOR TABLE bench_src");
      for (int run = 1; run <= runs; run++) {
        for (int batch : batches) {
          for (String variant : variants) {
            double rate = h.measure(variant, batch, events);
            String line =
                String.format(
                    Locale.ROOT,
                    "{\"variant\": \"%s\", \"batch\": %d, \"run\": %d, \"events\": %d,"
                        + " \"eventsPerSecond\": %.0f}",
                    variant,
                    batch,
                    run,
                    events,
                    rate);
            System.out.println(line);
            results.add(line);
          }
        }
      }
    }
    if (out != null) {
      try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(Path.of(out)))) {
        w.println("[\n  " + String.join(",\n  ", results) + "\n]");
      }
    }
  }

  private double measure(String variant, int batch, int events) throws Exception {
    String slot = "bench_" + ++slots;
    String sink = "sink_" + slots;
    pg.execute(
        "TRUNCATE bench_src",
        "CREATE TABLE " + sink + " (id int PRIMARY KEY, note text)",
        "SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
    for (int from = 1; from <= events; from += 1000) {
      pg.execute(
          "INSERT INTO bench_src SELECT g, repeat('x', 32) FROM generate_series("
              + from
              + ", "
              + Math.min(events, from + 999)
              + ") g");
    }
    org.postgresql.ds.PGSimpleDataSource ds = new org.postgresql.ds.PGSimpleDataSource();
    ds.setURL(pg.jdbcUrl()); // the driver's own DataSource: connections to one URL
    CdcCheckpointStore store;
    TransactionalCheckpoints transactional = null;
    switch (variant) {
      case "none" -> store = new MemoryCheckpointStore();
      case "transactional" -> {
        transactional =
            JdbcCheckpointStore.builder(ds).table("checkpoint_" + slots).open().transactional();
        store = transactional;
      }
      case "upsert-file" -> store = FileCheckpointStore.open(tmp.resolve(slot));
      default -> throw new IllegalArgumentException("unknown variant " + variant);
    }
    String insert =
        variant.equals("upsert-file")
            ? "INSERT INTO "
                + sink
                + " VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET note = EXCLUDED.note"
            : "INSERT INTO " + sink + " VALUES (?, ?)";
    CountDownLatch done = new CountDownLatch(1);
    long[] times = new long[2];
    TransactionalCheckpoints tx = transactional;
    try (Connection c = ds.getConnection();
        PreparedStatement ps = c.prepareStatement(insert);
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(pg.jdbcUrl())
                .user(pg.user())
                .slot(slot)
                .publication("bench")
                .checkpointStore(store)
                .acknowledgementDurability(
                    tx != null
                        ? AcknowledgementDurability.TRANSACTION
                        : AcknowledgementDurability.EVENT)
                .build()) {
      c.setAutoCommit(false);
      List<CdcOffset> pending = new ArrayList<>();
      int[] handled = {0};
      CompletableFuture<Void> stopped =
          source.start(
              (event, handle) -> {
                if (handled[0] == 0) {
                  times[0] = System.nanoTime();
                }
                InsertEvent insertEvent = (InsertEvent) event;
                ps.setInt(1, (Integer) insertEvent.after().get("id"));
                ps.setString(2, (String) insertEvent.after().get("note"));
                ps.executeUpdate();
                pending.add(event.offset());
                handled[0]++;
                if (pending.size() == batch || handled[0] == events) {
                  commit(tx, c, handle, pending);
                  pending.clear();
                }
                if (handled[0] == events) {
                  times[1] = System.nanoTime();
                  done.countDown();
                }
              });
      stopped.whenComplete((v, e) -> done.countDown());
      if (!done.await(5, TimeUnit.MINUTES) || times[1] == 0) {
        stopped.getNow(null); // the source's failure, if any
        throw new IllegalStateException(variant + " batch " + batch + " did not finish");
      }
    } finally {
      store.close();
      pg.execute("SELECT pg_drop_replication_slot('" + slot + "')", "DROP TABLE " + sink);
    }
    return events * 1e9 / (times[1] - times[0]);
  }

  private static void commit(
      TransactionalCheckpoints tx, Connection c, CdcCheckpointHandle handle, List<CdcOffset> batch)
      throws SQLException {
    if (tx != null) {
      tx.commit(c, handle, batch);
      return;
    }
    c.commit();
    List<CompletableFuture<Void>> acks = new ArrayList<>();
    for (CdcOffset offset : batch) {
      acks.add(handle.acknowledgeAsync(offset));
    }
    CompletableFuture.allOf(acks.toArray(new CompletableFuture<?>[0])).join();
  }
}
