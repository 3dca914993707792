package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Initial-snapshot throughput of datum-cdc, Debezium Engine and {@code psql}'s {@code COPY ... TO
 * STDOUT} on one embedded PostgreSQL 17. The data is generated once per harness run (see {@link
 * DataSet}); then, for each scenario ({@code one}: the table {@code big}; {@code twenty}: the
 * tables {@code t01..t20}), consumer and parallelism, the consumer copies every row of the
 * scenario's tables, datum-cdc and Debezium each on a fresh publication and a slot it creates, in a
 * child JVM of its own; the COPY baseline as psql processes. Measured: rows per second (rows over
 * the time from the consumer's launch to its last row), the JVMs' peak heap, the consumer's CPU
 * time and the CPU time of the whole server. See {@code docs/benchmarks.md}.
 *
 * <pre>
 * java -cp cdc-benchmarks/target/benchmarks.jar io.datum.cdc.benchmarks.snapshot.SnapshotHarness \
 *     [--rows 5000000] [--scenarios one,twenty] [--consumers copy,datum,debezium]
 *     [--parallelism 1,2,4] [--runs 1] [--out snapshot.json]
 *     [--datum-jvm-args "-Xms64m -Xmx256m -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError"]
 *     [--debezium-jvm-args "-Xms64m -Xmx1g -XX:+UseG1GC -XX:+ExitOnOutOfMemoryError"] [--timeout 3600]
 *     [--psql /usr/bin/psql] [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]
 * </pre>
 */
public final class SnapshotHarness {
  private final EmbeddedPostgresServer pg;
  private final SnapshotOptions o;
  private final DataSet data;
  private long bigPages;

  private SnapshotHarness(EmbeddedPostgresServer pg, SnapshotOptions o) {
    this.pg = pg;
    this.o = o;
    this.data = new DataSet(o.rows);
  }

  /**
   * Runs the benchmark.
   *
   * @param args the options, {@code --help} lists them
   * @throws Exception if the server cannot be started or the data generated
   */
  public static void main(String[] args) throws Exception {
    SnapshotOptions o = SnapshotOptions.parse(args);
    log("starting the embedded PostgreSQL 17");
    try (EmbeddedPostgresServer pg =
        EmbeddedPostgresServer.builder()
            .setting("max_wal_size", "4GB")
            // the harness vacuums itself once the data is written; nothing may run in between
            .setting("autovacuum", "off")
            .start()) {
      log("PostgreSQL on port " + pg.port() + ", data in " + pg.dataDirectory());
      SnapshotHarness h = new SnapshotHarness(pg, o);
      Map<String, Object> header = h.generate();
      List<SnapshotResult> results = new ArrayList<>();
      for (int run = 1; run <= o.runs; run++) {
        for (String scenario : o.scenarios) {
          for (String consumer : o.consumers) {
            for (int p : o.parallelism) {
              SnapshotResult r = h.measure(scenario, consumer, p, run);
              results.add(r);
              log("result " + r.json());
              if (o.out != null) {
                SnapshotResult.write(Path.of(o.out), header, results);
              }
            }
          }
        }
      }
      System.out.println();
      System.out.println(SnapshotResult.table(results));
    }
    System.exit(0);
  }

  private Map<String, Object> generate() throws Exception {
    log(
        String.format(
            Locale.ROOT,
            "generating big (%,d rows) and t01..t20 (%,d rows each)",
            data.rows,
            data.rowsPerSmallTable));
    long t0 = System.nanoTime();
    data.generate(pg);
    double seconds = (System.nanoTime() - t0) / 1e9;
    Map<String, Object> h = new LinkedHashMap<>();
    h.put("startedAt", Instant.now().toString());
    h.put("rows", data.rows);
    h.put("rowsPerSmallTable", data.rowsPerSmallTable);
    h.put("cpus", Runtime.getRuntime().availableProcessors());
    h.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    h.put("datumJvmArgs", String.join(" ", o.datumJvmArgs));
    h.put("debeziumJvmArgs", String.join(" ", o.debeziumJvmArgs));
    h.put("generationSeconds", seconds);
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      h.put("postgres", one(s, "SHOW server_version"));
      h.put("sharedBuffers", one(s, "SHOW shared_buffers"));
      h.put("bigBytes", Long.parseLong(one(s, "SELECT pg_relation_size('big')")));
      h.put(
          "smallTablesBytes",
          Long.parseLong(
              one(
                  s,
                  "SELECT sum(pg_relation_size(c.oid)) FROM pg_class c WHERE relname ~ '^t[0-9][0-9]$'"
                      + " AND relkind = 'r'")));
      h.put(
          "bigAverageRowBytes",
          Double.parseDouble(one(s, "SELECT avg(pg_column_size(b.*)) FROM big b")));
      bigPages =
          Long.parseLong(
              one(s, "SELECT pg_relation_size('big') / current_setting('block_size')::int"));
    }
    log(String.format(Locale.ROOT, "generated in %.1f s: %s", seconds, h));
    return h;
  }

  private static String one(Statement s, String sql) throws SQLException {
    try (ResultSet rs = s.executeQuery(sql)) {
      rs.next();
      return rs.getString(1);
    }
  }

  private SnapshotResult measure(String scenario, String consumer, int p, int run) {
    String name = "snap_" + scenario + "_" + consumer + "_p" + p + "_r" + run;
    String slot = name + "_slot", publication = name + "_pub";
    List<String> tables = DataSet.tables(scenario);
    SnapshotResult r =
        new SnapshotResult()
            .put("scenario", scenario)
            .put("consumer", consumer)
            .put("parallelism", p)
            .put("run", run)
            .put("tables", tables.size())
            .put("expectedRows", data.expectedRows(scenario));
    log(scenario + "/" + consumer + " p" + p + " run " + run);
    try {
      if (!consumer.equals("copy")) {
        pg.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + String.join(", ", tables));
      }
      ServerCpu server = new ServerCpu(pg.dataDirectory());
      server.begin();
      try {
        switch (consumer) {
          case "copy" -> CopyBaseline.run(o, pg, tables, bigPages, p, r);
          case "debezium" ->
              ChildConsumer.run(
                  o,
                  r,
                  o.debeziumJvmArgs,
                  ChildConsumer.debeziumKafkaClassPath(o),
                  List.of(
                      DebeziumSnapshotConsumer.class.getName(),
                      EmbeddedPostgresServer.HOST,
                      Integer.toString(pg.port()),
                      EmbeddedPostgresServer.DEFAULT_DATABASE,
                      pg.user(),
                      pg.password().isEmpty() ? "-" : pg.password(),
                      slot,
                      publication,
                      String.join(",", tables),
                      Long.toString(data.expectedRows(scenario)),
                      Long.toString(o.timeoutSeconds),
                      Integer.toString(p)));
          case "datum", "datum_values" ->
              ChildConsumer.run(
                  o,
                  r,
                  o.datumJvmArgs,
                  "",
                  List.of(
                      DatumSnapshotConsumer.class.getName(),
                      pg.jdbcUrl(),
                      pg.user(),
                      pg.password().isEmpty() ? "-" : pg.password(),
                      slot,
                      publication,
                      Long.toString(data.expectedRows(scenario)),
                      Long.toString(o.timeoutSeconds),
                      Integer.toString(p),
                      consumer.equals("datum_values") ? "values" : "count"));
          default -> throw new IllegalArgumentException("unknown consumer " + consumer);
        }
      } finally {
        double[] cpu = server.end();
        r.put("serverCpuSeconds", cpu[0])
            .put("busiestServerProcessCpuSeconds", cpu[1])
            .put("serverProcessesStarted", (int) cpu[2]);
      }
    } catch (Exception e) {
      log(name + " failed: " + e);
      r.put("error", String.valueOf(e.getMessage()));
    } finally {
      try {
        cleanUp(slot, publication);
      } catch (Exception e) {
        log("cleaning up " + name + " failed: " + e);
      }
    }
    return r;
  }

  private void cleanUp(String slot, String publication) throws Exception {
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
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
      try (ResultSet rs =
          s.executeQuery("SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
        if (rs.next()) {
          s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
        }
      }
      s.execute("DROP PUBLICATION IF EXISTS " + publication);
    }
  }

  static void log(String message) {
    System.err.println("[snapshot] " + message);
  }
}
