package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * End-to-end throughput of datum-cdc, Debezium Engine and {@code pg_recvlogical} on one embedded
 * PostgreSQL 17: for each workload and consumer, a fresh table, publication and pgoutput slot; the
 * workload is written first, then the consumer (a child process, so heap and CPU are its own)
 * drains the backlog. See {@code cdc-benchmarks/README.md}.
 *
 * <pre>
 * java -cp cdc-benchmarks/target/benchmarks.jar io.datum.cdc.benchmarks.e2e.EndToEndHarness \
 *     [--workloads a,b,c] [--consumers datum,debezium,pg_recvlogical] [--runs 1] [--scale 1]
 *     (consumer datum_values: datum with a handler that reads every value; datum_metrics: datum with cdc-micrometer's binder and timed store on a Prometheus
 *     registry scraped every second)
 *     [--out results.json] [--child-jvm-args "-Xmx4g"] [--timeout 1800]
 *     [--pg-recvlogical /usr/bin/pg_recvlogical] [--idle-seconds 3]
 *     [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]
 *     [--pgcdc-jar cdc-cli/target/pgcdc.jar] (consumer pgcdc: pgcdc stream, its lines to a pipe)
 * </pre>
 */
public final class EndToEndHarness {

  private final EmbeddedPostgresServer pg;
  private final HarnessOptions o;

  private EndToEndHarness(EmbeddedPostgresServer pg, HarnessOptions o) {
    this.pg = pg;
    this.o = o;
  }

  public static void main(String[] args) throws Exception {
    HarnessOptions o = HarnessOptions.parse(args);
    log("starting the embedded PostgreSQL 17");
    try (EmbeddedPostgresServer pg =
        EmbeddedPostgresServer.builder().setting("max_wal_size", "4GB").start()) {
      log("PostgreSQL on port " + pg.port() + ", data in " + pg.dataDirectory());
      EndToEndHarness h = new EndToEndHarness(pg, o);
      List<Result> results = new ArrayList<>();
      for (int run = 1; run <= o.runs; run++) {
        for (Workload w : o.workloads) {
          for (String consumer : o.consumers) {
            Result r;
            try {
              r = h.measure(w, consumer, run);
            } catch (Exception e) {
              log(w + "/" + consumer + " run " + run + " failed: " + e);
              r =
                  new Result()
                      .put("workload", w.name().toLowerCase(Locale.ROOT))
                      .put("consumer", consumer)
                      .put("run", run)
                      .put("events", 0L)
                      .put("error", String.valueOf(e.getMessage()));
            }
            results.add(r);
            log("result " + r.json());
            if (o.out != null) {
              Result.write(o, results);
            }
          }
        }
      }
      System.out.println();
      System.out.println(Result.table(o, results));
    }
    System.exit(0);
  }

  private Result measure(Workload w, String consumer, int run) throws Exception {
    String name = ("e2e_" + w.name() + "_" + consumer + "_" + run).toLowerCase(Locale.ROOT);
    String table = name, publication = name + "_pub", slot = name + "_slot";
    long expected;
    String endLsn;
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + table);
      s.execute("DROP PUBLICATION IF EXISTS " + publication);
      try (ResultSet rs =
          s.executeQuery("SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
        if (rs.next()) {
          s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
        }
      }
      w.create(s, table, o.scale);
      s.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + table);
      s.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
      log(
          w
              + "/"
              + consumer
              + " run "
              + run
              + ": writing "
              + w.description
              + " at scale "
              + o.scale);
      long t0 = System.nanoTime();
      s.execute("SET synchronous_commit = off");
      w.write(s, table, o.scale);
      s.execute("SET synchronous_commit = on");
      try (ResultSet rs = s.executeQuery(w.expectedEventsSql(table))) {
        rs.next();
        expected = rs.getLong(1);
      }
      try (ResultSet rs =
          s.executeQuery(
              "SELECT pg_current_wal_lsn(), pg_wal_lsn_diff(pg_current_wal_lsn(), restart_lsn) FROM pg_replication_slots WHERE slot_name = '"
                  + slot
                  + "'")) {
        rs.next();
        endLsn = rs.getString(1);
        log(
            String.format(
                Locale.ROOT,
                "wrote %,d events in %.1f s; %,.0f MB of WAL behind the slot",
                expected,
                (System.nanoTime() - t0) / 1e9,
                rs.getDouble(2) / 1e6));
      }
      s.execute("CHECKPOINT");
    }
    Result r =
        new Result()
            .put("workload", w.name().toLowerCase(Locale.ROOT))
            .put("consumer", consumer)
            .put("run", run)
            .put("scale", o.scale)
            .put("expectedEvents", expected);
    WalsenderSampler walsender = new WalsenderSampler(pg, slot);
    walsender.start();
    try {
      switch (consumer) {
        case "datum", "datum_values", "datum_metrics" ->
            JvmConsumer.run(
                o,
                r,
                expected,
                "",
                List.of(
                    DatumConsumer.class.getName(),
                    pg.jdbcUrl(),
                    pg.user(),
                    pg.password().isEmpty() ? "-" : pg.password(),
                    slot,
                    publication,
                    Long.toString(expected),
                    Long.toString(o.timeoutSeconds),
                    switch (consumer) {
                      case "datum_metrics" -> "metrics";
                      case "datum_values" -> "values";
                      default -> "-";
                    }));
        case "debezium" ->
            JvmConsumer.run(
                o,
                r,
                expected,
                JvmConsumer.debeziumKafkaClassPath(o),
                List.of(
                    DebeziumConsumer.class.getName(),
                    EmbeddedPostgresServer.HOST,
                    Integer.toString(pg.port()),
                    EmbeddedPostgresServer.DEFAULT_DATABASE,
                    pg.user(),
                    pg.password().isEmpty() ? "-" : pg.password(),
                    slot,
                    publication,
                    table,
                    Long.toString(expected),
                    Long.toString(o.timeoutSeconds)));
        case "pgcdc" -> PgcdcStream.run(o, pg, r, expected, slot, publication);
        case "pg_recvlogical" ->
            RecvLogical.toDevNull(o, pg, r, expected, slot, publication, endLsn);
        default -> RecvLogical.toPipe(o, pg, r, expected, slot, publication);
      }
    } finally {
      walsender.stopAndJoin();
      r.put("walsenderCpuSeconds", walsender.cpuSeconds());
      cleanUp(r, slot, publication, table, endLsn);
    }
    return r;
  }

  private void cleanUp(Result r, String slot, String publication, String table, String endLsn)
      throws SQLException, InterruptedException {
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      try (ResultSet rs =
          s.executeQuery(
              "SELECT confirmed_flush_lsn, pg_wal_lsn_diff('"
                  + endLsn
                  + "', confirmed_flush_lsn) FROM pg_replication_slots WHERE slot_name = '"
                  + slot
                  + "'")) {
        rs.next();
        r.put("confirmedFlushLsn", rs.getString(1))
            .put("endLsn", endLsn)
            .put("bytesNotConfirmed", rs.getLong(2));
      }
      for (int i = 0; i < 100; i++) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT active FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
          if (!rs.next() || !rs.getBoolean(1)) {
            break;
          }
        }
        Thread.sleep(100);
      }
      s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
      s.execute("DROP PUBLICATION " + publication);
      s.execute("DROP TABLE " + table);
      s.execute("CHECKPOINT");
    }
  }

  static void log(String message) {
    System.err.println("[e2e] " + message);
  }
}
