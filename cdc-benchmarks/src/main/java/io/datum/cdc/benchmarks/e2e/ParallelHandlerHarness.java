package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Parallel handlers: datum-cdc's {@code handlerThreads(n, KEY)} beside Debezium Engine 3.6.1's
 * {@code record.processing.threads} = n (ORDERED and UNORDERED), in the same run on one embedded
 * PostgreSQL 17, with a handler that waits 1 ms per event and one that inserts each event into a
 * second database in its own transaction. For each handler, n and consumer: a fresh table of 10,000
 * rows, publication and slot; then {@code events} single-row updates (transactions of 10 rows, keys
 * cycling over the table), written before the consumer starts; the consumer (a child JVM) drains
 * the backlog. The rate is events over the time from the first to the last update handled. See
 * {@code cdc-benchmarks/README.md}.
 *
 * <pre>
 * java -cp cdc-benchmarks/target/benchmarks.jar io.datum.cdc.benchmarks.e2e.ParallelHandlerHarness \
 *     [--threads 1,4,16,64] [--handlers wait,insert]
 *     [--consumers datum,debezium_ordered,debezium_unordered] [--runs 1]
 *     [--events-per-thread 2000] [--max-events 40000] [--out parallel.json]
 *     [--durability event|transaction] (datum-cdc's acknowledgement durability, event by default)
 * </pre>
 */
public final class ParallelHandlerHarness {

  private static final int KEYS = 10_000;

  private ParallelHandlerHarness() {}

  /**
   * Runs the harness.
   *
   * @param args see the class comment
   * @throws Exception if PostgreSQL cannot start or a consumer fails
   */
  public static void main(String[] args) throws Exception {
    List<Integer> threads = List.of(1, 4, 16, 64);
    List<String> handlers = List.of("wait", "insert");
    List<String> consumers = List.of("datum", "debezium_ordered", "debezium_unordered");
    int runs = 1;
    int perThread = 2000;
    int maxEvents = 40_000;
    String out = null;
    String durability = "event";
    for (int i = 0; i + 1 < args.length; i += 2) {
      String v = args[i + 1];
      switch (args[i]) {
        case "--threads" -> threads = Arrays.stream(v.split(",")).map(Integer::valueOf).toList();
        case "--handlers" -> handlers = List.of(v.split(","));
        case "--consumers" -> consumers = List.of(v.split(","));
        case "--runs" -> runs = Integer.parseInt(v);
        case "--events-per-thread" -> perThread = Integer.parseInt(v);
        case "--max-events" -> maxEvents = Integer.parseInt(v);
        case "--out" -> out = v;
        case "--durability" -> durability = v;
        default -> throw new IllegalArgumentException("unknown option " + args[i]);
      }
    }
    HarnessOptions o = new HarnessOptions();
    o.childJvmArgs = List.of("-Xms64m", "-Xmx2g", "-XX:+UseG1GC");
    o.timeoutSeconds = 600;
    List<Result> results = new ArrayList<>();
    try (EmbeddedPostgresServer pg =
        EmbeddedPostgresServer.builder()
            .setting("max_wal_size", "4GB")
            .setting("max_connections", "300")
            .start()) {
      log("PostgreSQL on port " + pg.port());
      try (Connection c = pg.getConnection();
          Statement s = c.createStatement()) {
        s.execute("CREATE DATABASE sink");
      }
      try (Connection c = pg.getConnection("sink");
          Statement s = c.createStatement()) {
        s.execute("CREATE TABLE sink (id int NOT NULL, v int NOT NULL)");
      }
      for (int run = 1; run <= runs; run++) {
        for (String handler : handlers) {
          for (int n : threads) {
            for (String consumer : consumers) {
              long events = Math.min((long) perThread * n, maxEvents);
              Result r = measure(pg, o, handler, n, consumer, run, events, durability);
              results.add(r);
              log("result " + r.json());
              if (out != null) {
                write(out, results);
              }
            }
          }
        }
      }
    }
    System.out.println(table(results));
    System.exit(0);
  }

  private static Result measure(
      EmbeddedPostgresServer pg,
      HarnessOptions o,
      String handler,
      int n,
      String consumer,
      int run,
      long events,
      String durability)
      throws Exception {
    String name =
        ("par_" + handler + "_" + n + "_" + consumer + "_" + run).toLowerCase(Locale.ROOT);
    String table = name, publication = name + "_pub", slot = name + "_slot";
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      s.execute("CREATE TABLE " + table + " (id int PRIMARY KEY, v int NOT NULL)");
      s.execute("INSERT INTO " + table + " SELECT g, 0 FROM generate_series(1, " + KEYS + ") g");
      s.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + table);
      s.execute("SELECT pg_create_logical_replication_slot('" + slot + "', 'pgoutput')");
      s.execute("SET synchronous_commit = off");
      // transactions of 10 single-row updates, keys cycling over the table
      s.execute(
          "DO $$ BEGIN FOR t IN 0.."
              + (events / 10 - 1)
              + " LOOP UPDATE "
              + table
              + " SET v = v + 1 WHERE id BETWEEN (t * 10) % "
              + KEYS
              + " + 1 AND (t * 10) % "
              + KEYS
              + " + 10; COMMIT; END LOOP; END $$");
      s.execute("SET synchronous_commit = on");
      s.execute("CHECKPOINT");
    }
    long expected = events / 10 * 10;
    log(handler + " n=" + n + " " + consumer + " run " + run + ": " + expected + " updates");
    Result r =
        new Result()
            .put("handler", handler)
            .put("threads", n)
            .put("consumer", consumer)
            .put("run", run)
            .put("expectedEvents", expected)
            .put("durability", consumer.equals("datum") ? durability : "offsets in memory");
    String password = pg.password().isEmpty() ? "-" : pg.password();
    String sink = sinkUrl(pg);
    if (consumer.equals("datum")) {
      JvmConsumer.run(
          o,
          r,
          expected,
          "",
          List.of(
              ParallelDatumConsumer.class.getName(),
              pg.jdbcUrl(),
              pg.user(),
              password,
              slot,
              publication,
              Long.toString(expected),
              Long.toString(o.timeoutSeconds),
              Integer.toString(n),
              handler,
              sink,
              durability));
    } else {
      JvmConsumer.run(
          o,
          r,
          expected,
          JvmConsumer.debeziumKafkaClassPath(o),
          List.of(
              ParallelDebeziumConsumer.class.getName(),
              EmbeddedPostgresServer.HOST,
              Integer.toString(pg.port()),
              EmbeddedPostgresServer.DEFAULT_DATABASE,
              pg.user(),
              password,
              slot,
              publication,
              table,
              Long.toString(expected),
              Long.toString(o.timeoutSeconds),
              Integer.toString(n),
              consumer.equals("debezium_ordered") ? "ORDERED" : "UNORDERED",
              handler,
              sink));
    }
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
        Thread.sleep(100); // waiting for the child's walsender to go; not a test
      }
      s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
      s.execute("DROP PUBLICATION " + publication);
      s.execute("DROP TABLE " + table);
    }
    return r;
  }

  private static String sinkUrl(EmbeddedPostgresServer pg) {
    return pg.jdbcUrl("sink") + (pg.password().isEmpty() ? "" : "&password=" + pg.password());
  }

  private static void write(String out, List<Result> results) throws java.io.IOException {
    StringBuilder b = new StringBuilder("{\n  \"cpus\": ");
    b.append(Runtime.getRuntime().availableProcessors()).append(",\n  \"results\": [\n");
    for (int i = 0; i < results.size(); i++) {
      b.append("    ").append(results.get(i).json()).append(i + 1 < results.size() ? ",\n" : "\n");
    }
    Files.writeString(Path.of(out), b.append("  ]\n}\n"));
  }

  private static String table(List<Result> results) {
    StringBuilder b =
        new StringBuilder(
            "| handler | threads | consumer | run | events | events/s | CPU s | peak heap MB |\n"
                + "|---|---|---|---|---|---|---|---|\n");
    for (Result r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %,d | %,.0f | %.2f | %.0f |%n",
              r.values.get("handler"),
              r.values.get("threads"),
              r.values.get("consumer"),
              r.values.get("run"),
              ((Number) r.values.getOrDefault("events", 0L)).longValue(),
              r.d("eventsPerSecond"),
              r.d("cpuSeconds"),
              r.d("peakHeapMB")));
    }
    return b.toString();
  }

  static void log(String message) {
    System.err.println("[parallel] " + message);
  }
}
