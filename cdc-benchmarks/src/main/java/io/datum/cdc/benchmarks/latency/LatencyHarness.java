package io.datum.cdc.benchmarks.latency;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.benchmarks.e2e.ConsumerCommands;
import io.datum.cdc.embedded.ChildJvm;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Latency under a steady load: {@code pgbench} commits inserts at a fixed rate (single-row or
 * multi-row transactions) into a fresh table while one consumer reads the slot live; each change's
 * latency is its consumer's time of having it minus its transaction's commit time (pgoutput's
 * Begin; Debezium's {@code source.ts_us}). Consumers: {@code datum} (the library, per-event durable
 * {@code acknowledge} into a {@code file:} store), {@code datum_async} (the same with {@code
 * acknowledgeAsync}), {@code pgcdc} ({@code pgcdc stream}, its default mode, a {@code file:} store;
 * a line's arrival on the harness's end of the pipe), {@code debezium} (Debezium Engine) and {@code
 * pg_recvlogical} (raw pgoutput through a pipe). The first {@code --warmup} seconds of commits are
 * not counted; a consumer kept up if the median latency of the window's last tenth is within 2
 * times (or 20 ms) of its first tenth's. See {@code cdc-benchmarks/README.md}.
 *
 * <pre>
 * java -cp cdc-benchmarks/target/benchmarks.jar io.datum.cdc.benchmarks.latency.LatencyHarness \
 *     [--rates 1000,10000,50000] [--rows 1,10] [--consumers datum,datum_async,pgcdc,debezium,pg_recvlogical]
 *     [--seconds 30] [--warmup 5] [--out latency.json] [--child-jvm-args "-Xms64m -Xmx1g -XX:+UseG1GC"]
 *     [--pgcdc-jar cdc-cli/target/pgcdc.jar] [--pgbench /usr/bin/pgbench]
 *     [--pg-recvlogical /usr/bin/pg_recvlogical] [--drain-timeout 120]
 *     [--raw DIR] (every change's commit time and latency, a file per cell)
 *     [--server-fsync false] (the benchmark server's fsync; off by default, see main)
 *     [--store-dir DIR] (where the consumers' file: stores are made; java.io.tmpdir by default,
 *     the file system of the server's data directory)
 *     [--max-from 5000] [--max-steps 6] (instead of --rates: per consumer, the highest rate it
 *     sustains, see maxRate)
 * </pre>
 */
public final class LatencyHarness {
  static final List<String> ALL =
      List.of("datum", "datum_async", "pgcdc", "debezium", "pg_recvlogical");
  private static final String TABLE = "lat";
  private static final String PUBLICATION = "lat_pub";
  private static final String SLOT = "lat_slot";

  private final EmbeddedPostgresServer pg;
  private final Options o;

  private LatencyHarness(EmbeddedPostgresServer pg, Options o) {
    this.pg = pg;
    this.o = o;
  }

  /** The command-line options. */
  static final class Options {
    List<Integer> rates = List.of(1000, 10000, 50000);
    List<Integer> rows = List.of(1, 10);
    List<String> consumers = ALL;
    int seconds = 30;
    int warmup = 5;
    String out;
    List<String> childJvmArgs = List.of("-Xms64m", "-Xmx1g", "-XX:+UseG1GC");
    String pgcdcJar = "cdc-cli/target/pgcdc.jar";
    String pgbench = "/usr/bin/pgbench";
    String pgRecvlogical = "/usr/bin/pg_recvlogical";
    int drainTimeout = 120;
    String raw;
    String storeDir;
    boolean serverFsync;
    int maxFrom;
    int maxSteps = 6;

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i += 2) {
        String v = i + 1 < args.length ? args[i + 1] : null;
        switch (args[i]) {
          case "--rates" -> o.rates = ints(v);
          case "--rows" -> o.rows = ints(v);
          case "--consumers" -> o.consumers = Arrays.asList(v.split(","));
          case "--seconds" -> o.seconds = Integer.parseInt(v);
          case "--warmup" -> o.warmup = Integer.parseInt(v);
          case "--out" -> o.out = v;
          case "--child-jvm-args" -> o.childJvmArgs = Arrays.asList(v.trim().split("\\s+"));
          case "--pgcdc-jar" -> o.pgcdcJar = v;
          case "--pgbench" -> o.pgbench = v;
          case "--pg-recvlogical" -> o.pgRecvlogical = v;
          case "--drain-timeout" -> o.drainTimeout = Integer.parseInt(v);
          case "--raw" -> o.raw = v;
          case "--store-dir" -> o.storeDir = v;
          case "--server-fsync" -> o.serverFsync = Boolean.parseBoolean(v);
          case "--max-from" -> o.maxFrom = Integer.parseInt(v);
          case "--max-steps" -> o.maxSteps = Integer.parseInt(v);
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      for (String c : o.consumers) {
        if (!ALL.contains(c)) {
          throw new IllegalArgumentException("unknown consumer " + c + "; one of " + ALL);
        }
      }
      return o;
    }

    private static List<Integer> ints(String v) {
      return Arrays.stream(v.split(",")).map(String::trim).map(Integer::valueOf).toList();
    }
  }

  /**
   * Runs every consumer at every rate and transaction size, one after the other.
   *
   * @param args see the class comment
   * @throws Exception if the server cannot start
   */
  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
    List<Map<String, Object>> results = new ArrayList<>();
    // fsync=off: the writer's commits are not paced by this machine's fsync latency, which varies
    // by 3x between runs here; the WAL is still written (and flushed as far as PostgreSQL knows)
    // before the walsender sends it. The consumers' own checkpoint stores still fsync.
    // wal_init_zero=off: a fresh server has no WAL segments to recycle, so every 16 MB of WAL a
    // committing backend creates the next segment and, by default, writes its 16 MB of zeros while
    // holding WALWriteLock: about 80 ms here in which no commit is flushed and no walsender sends
    // (wait event WalInitWrite). Which consumer's cell met those stalls depended on its place in
    // the run (a later cell finds recycled segments); without the zeros every cell sees the same
    // server (docs/benchmarks.md, latency, item 7)
    try (EmbeddedPostgresServer pg =
        EmbeddedPostgresServer.builder()
            .setting("fsync", o.serverFsync ? "on" : "off")
            .setting("wal_init_zero", "off")
            .setting("max_wal_size", "4GB")
            .start()) {
      log("PostgreSQL on port " + pg.port());
      LatencyHarness h = new LatencyHarness(pg, o);
      List<Map<String, Object>> maxima = new ArrayList<>();
      for (int rows : o.rows) {
        if (o.maxFrom > 0) {
          for (String consumer : o.consumers) {
            maxima.add(h.maxRate(consumer, rows, results, maxima));
          }
          continue;
        }
        for (int rate : o.rates) {
          for (String consumer : o.consumers) {
            h.cell(consumer, rate, rows, results, maxima);
          }
        }
      }
    }
    System.out.println(table(results));
    if (o.maxFrom > 0) {
      System.out.println(maxTable(results, o.seconds));
    }
    System.exit(0);
  }

  /** Measures one cell, records it and writes the results so far. */
  private Map<String, Object> cell(
      String consumer,
      int rate,
      int rows,
      List<Map<String, Object>> results,
      List<Map<String, Object>> maxima)
      throws IOException {
    Map<String, Object> r = new LinkedHashMap<>();
    r.put("consumer", consumer);
    r.put("rowsPerTransaction", rows);
    r.put("targetChangesPerSecond", rate);
    try {
      measure(consumer, rate, rows, r);
    } catch (Exception e) {
      log(consumer + " at " + rate + "/s failed: " + e);
      r.put("error", String.valueOf(e));
    }
    log("result " + new ObjectMapper().writeValueAsString(r));
    results.add(r);
    if (o.out != null) {
      Map<String, Object> root = new LinkedHashMap<>();
      root.put("seconds", o.seconds);
      root.put("warmup", o.warmup);
      root.put("childJvmArgs", String.join(" ", o.childJvmArgs));
      root.put("serverFsync", o.serverFsync);
      root.put("results", results);
      if (o.maxFrom > 0) {
        root.put("maxSustained", maxima);
      }
      new ObjectMapper().writerWithDefaultPrettyPrinter().writeValue(Path.of(o.out).toFile(), root);
    }
    return r;
  }

  /**
   * Whether a cell was sustained: the consumer kept up (its lag did not grow over the window) and
   * the writer achieved at least 95% of the target (else the writer, not the consumer, was the
   * limit at that rate: on a small machine the writer, the server and the consumer share the
   * cores).
   */
  static boolean sustained(Map<String, Object> r) {
    return !r.containsKey("error")
        && Boolean.TRUE.equals(r.get("keptUp"))
        && r.get("achievedChangesPerSecond") instanceof Number a
        && a.doubleValue() >= 0.95 * ((Number) r.get("targetChangesPerSecond")).doubleValue();
  }

  /**
   * Finds the highest rate a consumer sustains for {@code --seconds}: from {@code --max-from}, up
   * by half while sustained, then halving the interval between the highest sustained and the lowest
   * not sustained rate, for {@code --max-steps} cells at most, rates rounded to 500.
   *
   * @return the consumer's result: the highest sustained rate (0 if none), the lowest failed one (0
   *     if none), and whether a failure was the writer's (it fell short of the target)
   */
  private Map<String, Object> maxRate(
      String consumer,
      int rows,
      List<Map<String, Object>> results,
      List<Map<String, Object>> maxima)
      throws IOException {
    int good = 0;
    int bad = 0;
    boolean writerLimited = false;
    int rate = o.maxFrom;
    for (int step = 0; step < o.maxSteps; step++) {
      Map<String, Object> r = cell(consumer, rate, rows, results, maxima);
      if (sustained(r)) {
        good = rate;
      } else {
        bad = rate;
        writerLimited =
            r.get("achievedChangesPerSecond") instanceof Number a && a.doubleValue() < 0.95 * rate;
      }
      int next = bad == 0 ? rate * 3 / 2 : (good + bad) / 2;
      next = Math.max(500, Math.round(next / 500f) * 500);
      if (next == good || next == bad) {
        break;
      }
      rate = next;
    }
    Map<String, Object> m = new LinkedHashMap<>();
    m.put("consumer", consumer);
    m.put("rowsPerTransaction", rows);
    m.put("maxSustainedChangesPerSecond", good);
    m.put("lowestFailedChangesPerSecond", bad);
    m.put("lowestFailedWriterLimited", writerLimited);
    log("max " + new ObjectMapper().writeValueAsString(m));
    return m;
  }

  /** The highest sustained rate per consumer and rows per transaction, from the search cells. */
  static String maxTable(List<Map<String, Object>> results, int seconds) {
    Map<String, int[]> best = new LinkedHashMap<>();
    for (Map<String, Object> r : results) {
      String key = r.get("rowsPerTransaction") + " | " + r.get("consumer");
      int[] b = best.computeIfAbsent(key, k -> new int[] {0, 0});
      int rate = ((Number) r.get("targetChangesPerSecond")).intValue();
      if (sustained(r)) {
        b[0] = Math.max(b[0], rate);
      } else if (b[1] == 0 || rate < b[1]) {
        b[1] = rate;
      }
    }
    StringBuilder t = new StringBuilder();
    t.append("| rows/tx | consumer | highest rate sustained for ")
        .append(seconds)
        .append(" s | lowest rate not sustained |\n|---|---|---|---|\n");
    best.forEach(
        (k, b) ->
            t.append(
                String.format(
                    Locale.ROOT,
                    "| %s | %,d | %s |%n",
                    k,
                    b[0],
                    b[1] == 0 ? "none tried" : String.format(Locale.ROOT, "%,d", b[1]))));
    return t.toString();
  }

  private void measure(String consumer, int rate, int rows, Map<String, Object> r)
      throws Exception {
    setUp();
    Path storeDir =
        o.storeDir == null
            ? Files.createTempDirectory("latency-store")
            : Files.createTempDirectory(Path.of(o.storeDir), "latency-store");
    Latencies pipeLatencies = new Latencies();
    Process p = start(consumer, storeDir, rate, rows);
    CompletableFuture<String> result = new CompletableFuture<>();
    Writer childIn = new OutputStreamWriter(p.getOutputStream(), StandardCharsets.UTF_8);
    Thread reader = reader(consumer, p, pipeLatencies, result);
    try {
      awaitSlotActive(p);
      int tps = Math.max(1, rate / rows);
      // enough clients for the rate (about 2,500 single-row commits/s each here), few enough
      // that the writer's own scheduling does not crowd out the consumer on a small machine
      int clients = Math.max(2, Math.min(8, (tps + 2499) / 2500));
      long start = Latencies.nowMicros();
      String bench = pgbench(rows, tps, clients, o.warmup + o.seconds);
      long from = start + o.warmup * 1_000_000L;
      long to = start + (o.warmup + o.seconds) * 1_000_000L;
      r.put("pgbenchClients", clients);
      r.put("achievedTransactionsPerSecond", number(bench, "tps = ([0-9.]+)"));
      r.put("achievedChangesPerSecond", number(bench, "tps = ([0-9.]+)") * rows);
      if (!consumer.equals("pgcdc") && !consumer.equals("pg_recvlogical")) {
        childIn.write("WINDOW " + from + " " + to + "\n");
        childIn.flush();
      }
      long endAt = System.nanoTime();
      try (Connection c = pg.getConnection();
          Statement s = c.createStatement()) {
        s.execute("INSERT INTO " + TABLE + " (payload) VALUES ('" + ChildProtocol.END + "')");
      }
      String line;
      try {
        line = result.get(o.drainTimeout, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        r.put("drained", false);
        throw new IllegalStateException(
            consumer + " did not reach the END row within " + o.drainTimeout + " s");
      }
      r.put("drainSeconds", (System.nanoTime() - endAt) / 1e9);
      Latencies.Summary s =
          line == null ? pipeLatencies.summarize(from, to) : Latencies.Summary.parse(line);
      if (line == null && o.raw != null) {
        pipeLatencies.dump(rawFile(consumer, rate, rows));
      }
      r.put("changesInWindow", s.count());
      r.put("p50Ms", s.p50());
      r.put("p99Ms", s.p99());
      r.put("p999Ms", s.p999());
      r.put("maxMs", s.max());
      r.put("firstTenthP50Ms", s.firstP50());
      r.put("lastTenthP50Ms", s.lastP50());
      r.put("keptUp", s.keptUp());
      try (Connection c = pg.getConnection();
          Statement st = c.createStatement();
          ResultSet rs = st.executeQuery("SELECT count(*) - 1 FROM " + TABLE)) {
        rs.next();
        r.put("changesWritten", rs.getLong(1));
      }
    } finally {
      p.destroy();
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
      }
      reader.join(10_000);
      tearDown();
      deleteTree(storeDir);
    }
  }

  private Path rawFile(String consumer, int rate, int rows) throws IOException {
    Files.createDirectories(Path.of(o.raw));
    return Path.of(o.raw, consumer + "-" + rate + "-" + rows + ".txt");
  }

  private List<String> jvmArgs(String consumer, int rate, int rows) throws IOException {
    List<String> args = new ArrayList<>(o.childJvmArgs);
    if (o.raw != null && !consumer.equals("pgcdc")) {
      args.add("-Dlatency.raw=" + rawFile(consumer, rate, rows));
    }
    return args;
  }

  private Process start(String consumer, Path storeDir, int rate, int rows) throws Exception {
    String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
    String password = pg.password().isEmpty() ? "-" : pg.password();
    List<String> cmd = new ArrayList<>();
    switch (consumer) {
      case "datum", "datum_async" -> {
        cmd.add(java);
        cmd.addAll(jvmArgs(consumer, rate, rows));
        cmd.addAll(List.of("-cp", ChildJvm.classPath(), DatumLatencyConsumer.class.getName()));
        cmd.addAll(
            List.of(
                pg.jdbcUrl(),
                pg.user(),
                password,
                SLOT,
                PUBLICATION,
                "file:" + storeDir,
                consumer.equals("datum") ? "acknowledge" : "async"));
      }
      case "debezium" -> {
        cmd.add(java);
        cmd.addAll(jvmArgs(consumer, rate, rows));
        cmd.addAll(
            List.of(
                "-cp",
                ConsumerCommands.debeziumKafkaClassPath(null) + ChildJvm.classPath(),
                DebeziumLatencyConsumer.class.getName(),
                EmbeddedPostgresServer.HOST,
                Integer.toString(pg.port()),
                EmbeddedPostgresServer.DEFAULT_DATABASE,
                pg.user(),
                password,
                SLOT,
                PUBLICATION,
                TABLE));
      }
      case "pgcdc" ->
          cmd.addAll(
              ConsumerCommands.pgcdcStream(
                  o.childJvmArgs, o.pgcdcJar, pg, SLOT, PUBLICATION, storeDir));
      default ->
          cmd.addAll(ConsumerCommands.pgRecvlogical(o.pgRecvlogical, pg, SLOT, PUBLICATION, "-"));
    }
    ProcessBuilder b = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    if (!pg.password().isEmpty()) {
      b.environment().put("PGPASSWORD", pg.password());
    }
    return b.start();
  }

  /** The thread reading the consumer's standard output: the result line, or the pipe's changes. */
  private static Thread reader(
      String consumer, Process p, Latencies latencies, CompletableFuture<String> result) {
    Thread t =
        new Thread(
            () -> {
              try {
                if (consumer.equals("pgcdc") || consumer.equals("pg_recvlogical")) {
                  boolean ended =
                      consumer.equals("pgcdc")
                          ? PipeReaders.jsonLines(p.getInputStream(), latencies)
                          : PipeReaders.pgoutput(p.getInputStream(), latencies);
                  if (ended) {
                    result.complete(null);
                  } else {
                    result.completeExceptionally(new IOException(consumer + " ended early"));
                  }
                  p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
                  return;
                }
                try (BufferedReader in =
                    new BufferedReader(
                        new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                  for (String l; (l = in.readLine()) != null; ) {
                    if (l.startsWith(ChildProtocol.RESULT_PREFIX)) {
                      result.complete(l.substring(ChildProtocol.RESULT_PREFIX.length()));
                    } else if (!l.equals("READY")) {
                      System.err.println("  [child] " + l);
                    }
                  }
                }
                result.completeExceptionally(new IOException(consumer + " ended without a result"));
              } catch (IOException | RuntimeException e) {
                result.completeExceptionally(e);
              }
            },
            "latency-reader");
    t.setDaemon(true);
    t.start();
    return t;
  }

  private void awaitSlotActive(Process p) throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      while (System.nanoTime() < deadline) {
        if (!p.isAlive()) {
          throw new IllegalStateException("the consumer exited with " + p.exitValue());
        }
        try (ResultSet rs =
            s.executeQuery(
                "SELECT active FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'")) {
          if (rs.next() && rs.getBoolean(1)) {
            return;
          }
        }
        Thread.sleep(50); // polling the catalog; not synchronisation between threads
      }
    }
    throw new IllegalStateException("the consumer did not start streaming within 120 s");
  }

  private String pgbench(int rows, int tps, int clients, int seconds) throws Exception {
    Path script = Files.createTempFile("latency", ".sql");
    Files.writeString(
        script,
        rows == 1
            ? "INSERT INTO " + TABLE + " (payload) VALUES (md5(random()::text));\n"
            : "INSERT INTO "
                + TABLE
                + " (payload) SELECT md5(random()::text) FROM generate_series(1, "
                + rows
                + ");\n");
    List<String> cmd =
        List.of(
            o.pgbench,
            "-n",
            "-h",
            EmbeddedPostgresServer.HOST,
            "-p",
            Integer.toString(pg.port()),
            "-U",
            pg.user(),
            "-c",
            Integer.toString(clients),
            "-j",
            "2",
            "-M",
            "prepared",
            "-R",
            Integer.toString(tps),
            "-T",
            Integer.toString(seconds),
            "-f",
            script.toString(),
            EmbeddedPostgresServer.DEFAULT_DATABASE);
    ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true);
    if (!pg.password().isEmpty()) {
      b.environment().put("PGPASSWORD", pg.password());
    }
    Process p = b.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException("pgbench failed: " + out);
    }
    Files.delete(script);
    return out;
  }

  private static double number(String text, String regex) {
    Matcher m = Pattern.compile(regex).matcher(text);
    return m.find() ? Double.parseDouble(m.group(1)) : Double.NaN;
  }

  private void setUp() throws SQLException {
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      s.execute("DROP TABLE IF EXISTS " + TABLE);
      s.execute("DROP PUBLICATION IF EXISTS " + PUBLICATION);
      s.execute("CREATE TABLE " + TABLE + " (id bigserial PRIMARY KEY, payload text NOT NULL)");
      s.execute("CREATE PUBLICATION " + PUBLICATION + " FOR TABLE " + TABLE);
      s.execute("SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
    }
  }

  private void tearDown() throws SQLException, InterruptedException {
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      for (int i = 0; i < 300; i++) {
        try (ResultSet rs =
            s.executeQuery(
                "SELECT active FROM pg_replication_slots WHERE slot_name = '" + SLOT + "'")) {
          if (!rs.next() || !rs.getBoolean(1)) {
            break;
          }
        }
        Thread.sleep(100); // polling the catalog; not synchronisation between threads
      }
      s.execute("SELECT pg_drop_replication_slot('" + SLOT + "')");
      s.execute("DROP PUBLICATION " + PUBLICATION);
      s.execute("DROP TABLE " + TABLE);
      s.execute("CHECKPOINT");
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var files = Files.walk(dir)) {
      for (Path f : files.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(f);
      }
    }
  }

  static String table(List<Map<String, Object>> results) {
    StringBuilder b = new StringBuilder();
    b.append(
        "| rows/tx | target changes/s | consumer | achieved changes/s | changes | p50 ms | p99 ms | p99.9 ms | max ms | kept up |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|\n");
    for (Map<String, Object> r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%n",
              r.get("rowsPerTransaction"),
              r.get("targetChangesPerSecond"),
              r.get("consumer"),
              fmt(r.get("achievedChangesPerSecond"), "%,.0f"),
              r.get("changesInWindow"),
              fmt(r.get("p50Ms"), "%.2f"),
              fmt(r.get("p99Ms"), "%.2f"),
              fmt(r.get("p999Ms"), "%.2f"),
              fmt(r.get("maxMs"), "%.1f"),
              r.containsKey("error") ? "failed: " + r.get("error") : r.get("keptUp")));
    }
    return b.toString();
  }

  private static String fmt(Object v, String format) {
    return v instanceof Number n ? String.format(Locale.ROOT, format, n.doubleValue()) : "n/a";
  }

  static void log(String message) {
    System.err.println("[latency] " + message);
  }
}
