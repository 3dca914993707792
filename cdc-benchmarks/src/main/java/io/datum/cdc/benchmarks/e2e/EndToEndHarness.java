package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * End-to-end throughput of datum-cdc, Debezium Engine and {@code pg_recvlogical} on one embedded
 * PostgreSQL 17: for each workload and consumer, a fresh table, publication and pgoutput slot; the
 * workload is written first, then the consumer (a child process, so heap and CPU are its own)
 * drains the backlog. See {@code cdc-benchmarks/README.md}.
 *
 * <pre>
 * java -cp cdc-benchmarks/target/benchmarks.jar io.datum.cdc.benchmarks.e2e.EndToEndHarness \
 *     [--workloads a,b,c] [--consumers datum,debezium,pg_recvlogical] [--runs 1] [--scale 1]
 *     [--out results.json] [--child-jvm-args "-Xmx4g"] [--timeout 1800]
 *     [--pg-recvlogical /usr/bin/pg_recvlogical] [--idle-seconds 3]
 *     [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]
 * </pre>
 */
public final class EndToEndHarness {

  private static final com.fasterxml.jackson.databind.ObjectMapper JSON =
      new com.fasterxml.jackson.databind.ObjectMapper();
  private static final long CLK_TCK = 100; // USER_HZ on Linux
  private static final String PUBLICATION_PARAMS = "proto_version=1";

  private final EmbeddedPostgresServer pg;
  private final Options o;

  private EndToEndHarness(EmbeddedPostgresServer pg, Options o) {
    this.pg = pg;
    this.o = o;
  }

  /** Command-line options. */
  static final class Options {
    List<Workload> workloads = List.of(Workload.A, Workload.B, Workload.C);
    List<String> consumers = List.of("datum", "debezium", "pg_recvlogical");
    static final List<String> ALL =
        List.of("datum", "debezium", "pg_recvlogical", "pg_recvlogical_pipe");
    int runs = 1;
    double scale = 1.0;
    String out;
    List<String> childJvmArgs = List.of("-Xms64m", "-Xmx4g", "-XX:+UseG1GC");
    long timeoutSeconds = 1800;
    String pgRecvlogical = "/usr/bin/pg_recvlogical";
    double idleSeconds = 3;
    String debeziumKafkaDir;

    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String a = args[i];
        String v = i + 1 < args.length ? args[i + 1] : null;
        switch (a) {
          case "--workloads" ->
              o.workloads = Arrays.stream(v.split(",")).map(Workload::of).toList();
          case "--consumers" ->
              o.consumers = Arrays.stream(v.split(",")).map(String::trim).toList();
          case "--runs" -> o.runs = Integer.parseInt(v);
          case "--scale" -> o.scale = Double.parseDouble(v);
          case "--out" -> o.out = v;
          case "--child-jvm-args" -> o.childJvmArgs = Arrays.asList(v.trim().split("\\s+"));
          case "--timeout" -> o.timeoutSeconds = Long.parseLong(v);
          case "--pg-recvlogical" -> o.pgRecvlogical = v;
          case "--idle-seconds" -> o.idleSeconds = Double.parseDouble(v);
          case "--debezium-kafka-dir" -> o.debeziumKafkaDir = v;
          case "-h", "--help" -> {
            System.out.println(
                "EndToEndHarness [--workloads a,b,c] [--consumers datum,debezium,pg_recvlogical]"
                    + " [--runs N] [--scale 1.0] [--out results.json] [--child-jvm-args \"-Xmx4g\"]"
                    + " [--timeout 1800] [--pg-recvlogical /usr/bin/pg_recvlogical] [--idle-seconds 3]"
                    + " [--debezium-kafka-dir cdc-benchmarks/target/debezium-kafka]");
            System.exit(0);
          }
          default -> throw new IllegalArgumentException("unknown option " + a);
        }
        i++;
      }
      for (String c : o.consumers) {
        if (!ALL.contains(c)) {
          throw new IllegalArgumentException("unknown consumer " + c);
        }
      }
      return o;
    }
  }

  /** One measurement. */
  static final class Result {
    final Map<String, Object> values = new LinkedHashMap<>();

    Result put(String k, Object v) {
      values.put(k, v);
      return this;
    }

    double d(String k) {
      Object v = values.get(k);
      return v instanceof Number n ? n.doubleValue() : Double.NaN;
    }

    /** The values with NaN as null, for JSON. */
    Map<String, Object> forJson() {
      Map<String, Object> out = new LinkedHashMap<>();
      values.forEach((k, v) -> out.put(k, v instanceof Double d && d.isNaN() ? null : v));
      return out;
    }

    String json() {
      try {
        return JSON.writeValueAsString(forJson());
      } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
        throw new java.io.UncheckedIOException(e);
      }
    }
  }

  public static void main(String[] args) throws Exception {
    Options o = Options.parse(args);
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
              write(o, results);
            }
          }
        }
      }
      System.out.println();
      System.out.println(table(o, results));
    }
    System.exit(0);
  }

  private static void write(Options o, List<Result> results) throws IOException {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("scale", o.scale);
    root.put("childJvmArgs", String.join(" ", o.childJvmArgs));
    root.put("cpus", Runtime.getRuntime().availableProcessors());
    List<Map<String, Object>> rows = new ArrayList<>();
    for (Result r : results) {
      rows.add(r.forJson());
    }
    root.put("results", rows);
    JSON.writerWithDefaultPrettyPrinter().writeValue(Path.of(o.out).toFile(), root);
  }

  static String table(Options o, List<Result> results) {
    StringBuilder b = new StringBuilder();
    b.append("scale ")
        .append(o.scale)
        .append(", child JVM ")
        .append(String.join(" ", o.childJvmArgs))
        .append('\n');
    b.append(
        "| workload | consumer | run | events | s (first to last) | events/s (first to last) | s (start to last) | events/s (start to last) | peak heap MB | CPU s (streaming) | CPU s (process) | walsender CPU s |\n");
    b.append("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (Result r : results) {
      b.append(
          String.format(
              Locale.ROOT,
              "| %s | %s | %s | %,d | %.2f | %,.0f | %.2f | %,.0f | %s | %.2f | %.2f | %.2f |%n",
              r.values.get("workload"),
              r.values.get("consumer"),
              r.values.get("run"),
              ((Number) r.values.get("events")).longValue(),
              r.d("seconds"),
              r.d("eventsPerSecond"),
              r.d("launchToLastSeconds"),
              r.d("events") / r.d("launchToLastSeconds"),
              r.values.containsKey("peakHeapMB")
                  ? String.format(Locale.ROOT, "%.0f", r.d("peakHeapMB"))
                  : Double.isNaN(r.d("peakRssMB"))
                      ? "n/a"
                      : String.format(Locale.ROOT, "(RSS %.0f)", r.d("peakRssMB")),
              r.d("cpuStreamingSeconds"),
              r.d("cpuSeconds"),
              r.d("walsenderCpuSeconds")));
    }
    return b.toString();
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
    WalsenderSampler walsender = new WalsenderSampler(slot);
    walsender.start();
    try {
      switch (consumer) {
        case "datum" ->
            child(
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
                    Long.toString(o.timeoutSeconds)));
        case "debezium" ->
            child(
                r,
                expected,
                debeziumKafkaClassPath(),
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
        case "pg_recvlogical" -> recvlogicalToDevNull(r, expected, slot, publication, endLsn);
        default -> recvlogical(r, expected, slot, publication);
      }
    } finally {
      walsender.stopAndJoin();
      r.put("walsenderCpuSeconds", walsender.cpuTicks.get() / (double) CLK_TCK);
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

  /** Runs a consumer in a child JVM and reads its E2E-RESULT line. */
  private void child(Result r, long expected, String classPathPrefix, List<String> mainAndArgs)
      throws Exception {
    List<String> cmd = new ArrayList<>();
    cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    cmd.addAll(o.childJvmArgs);
    cmd.add("-cp");
    cmd.add(classPathPrefix + System.getProperty("java.class.path"));
    cmd.addAll(mainAndArgs.stream().map(a -> a.equals("-") ? "" : a).toList());
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String line = null;
    long resultAt = 0;
    try (BufferedReader in =
        new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
      for (String l; (l = in.readLine()) != null; ) {
        if (l.startsWith(ConsumerProbe.RESULT_PREFIX)) {
          line = l.substring(ConsumerProbe.RESULT_PREFIX.length());
          resultAt = System.nanoTime();
        } else {
          System.err.println("  [child] " + l);
        }
      }
    }
    if (!p.waitFor(60, TimeUnit.SECONDS)) {
      p.destroyForcibly();
    }
    if (line == null) {
      throw new IllegalStateException(
          "consumer " + mainAndArgs.get(0) + " reported no result (exit " + p.exitValue() + ")");
    }
    Map<String, String> kv = new LinkedHashMap<>();
    for (String part : line.split(" ")) {
      int eq = part.indexOf('=');
      kv.put(part.substring(0, eq), part.substring(eq + 1));
    }
    long events = Long.parseLong(kv.get("events"));
    double seconds = Long.parseLong(kv.get("firstToLastNanos")) / 1e9;
    r.put("events", events)
        .put("complete", events == expected)
        .put("seconds", seconds)
        .put("eventsPerSecond", events / seconds)
        .put("launchToLastSeconds", (resultAt - launched) / 1e9)
        .put("peakHeapMB", Long.parseLong(kv.get("peakHeapBytes")) / 1048576.0)
        .put("cpuSeconds", Long.parseLong(kv.get("cpuNanos")) / 1e9)
        .put("cpuStreamingSeconds", Long.parseLong(kv.get("cpuStreamingNanos")) / 1e9)
        .put("busiestThreadsCpuSeconds", kv.get("busiestThreadsCpuS"));
  }

  /**
   * The Kafka 4.3 jars Debezium 3.6.1 is built against (target/debezium-kafka, next to
   * benchmarks.jar, copied there by the build), to go in front of the class path of its child.
   */
  private String debeziumKafkaClassPath() throws Exception {
    Path dir;
    if (o.debeziumKafkaDir != null) {
      dir = Path.of(o.debeziumKafkaDir);
    } else {
      Path jar =
          Path.of(
              EndToEndHarness.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      dir = jar.resolveSibling("debezium-kafka");
    }
    if (!Files.isDirectory(dir)) {
      throw new IllegalStateException(
          dir + " is missing; build cdc-benchmarks or pass --debezium-kafka-dir");
    }
    StringBuilder cp = new StringBuilder();
    try (var jars = Files.list(dir)) {
      jars.filter(f -> f.toString().endsWith(".jar"))
          .sorted()
          .forEach(f -> cp.append(f.toAbsolutePath()).append(java.io.File.pathSeparatorChar));
    }
    return cp.toString();
  }

  /**
   * Consumer {@code pg_recvlogical_pipe}: pg_recvlogical with the same slot and publication, its
   * raw pgoutput going to a pipe this process reads and discards (so the first and last byte can be
   * timed); stops it once the stream has been idle for {@code --idle-seconds} after its first byte.
   */
  private void recvlogical(Result r, long expected, String slot, String publication)
      throws Exception {
    List<String> cmd =
        List.of(
            o.pgRecvlogical,
            "--start",
            "-S",
            slot,
            "-d",
            EmbeddedPostgresServer.DEFAULT_DATABASE,
            "-h",
            EmbeddedPostgresServer.HOST,
            "-p",
            Integer.toString(pg.port()),
            "-U",
            pg.user(),
            "-o",
            PUBLICATION_PARAMS,
            "-o",
            "publication_names=" + publication,
            "-f",
            "-",
            "-F",
            "0",
            "-s",
            "1",
            "--no-loop");
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    AtomicLong bytes = new AtomicLong();
    AtomicLong first = new AtomicLong();
    AtomicLong last = new AtomicLong();
    Thread reader =
        new Thread(
            () -> {
              byte[] buf = new byte[1 << 16];
              try (InputStream in = p.getInputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                  long now = System.nanoTime();
                  if (bytes.getAndAdd(n) == 0) {
                    first.set(now);
                  }
                  last.set(now);
                }
              } catch (IOException e) {
                // the process ended
              }
            },
            "pg_recvlogical-reader");
    reader.start();
    long pid = p.pid();
    long deadline = launched + TimeUnit.SECONDS.toNanos(o.timeoutSeconds);
    long ticks = 0, hwmKb = 0;
    long idle = (long) (o.idleSeconds * 1e9);
    while (p.isAlive() && System.nanoTime() < deadline) {
      long[] st = procStat(pid);
      if (st != null) {
        ticks = st[0];
        hwmKb = st[1];
      }
      if (bytes.get() > 0 && System.nanoTime() - last.get() > idle) {
        break;
      }
      Thread.sleep(50);
    }
    long[] st = procStat(pid);
    if (st != null) {
      ticks = st[0];
      hwmKb = st[1];
    }
    p.destroy();
    p.waitFor(10, TimeUnit.SECONDS);
    reader.join(10_000);
    double seconds = (last.get() - first.get()) / 1e9;
    r.put("events", expected)
        .put("complete", "bytes=" + bytes.get())
        .put("seconds", seconds)
        .put("eventsPerSecond", expected / seconds)
        .put("launchToLastSeconds", (last.get() - launched) / 1e9)
        .put("peakRssMB", hwmKb / 1024.0)
        .put("cpuSeconds", ticks / (double) CLK_TCK)
        .put("cpuStreamingSeconds", ticks / (double) CLK_TCK)
        .put("bytes", bytes.get());
  }

  /**
   * Runs pg_recvlogical as the issue asks: raw pgoutput to /dev/null, {@code --endpos} the WAL
   * position after the workload, so it exits once it has received everything. It cannot time its
   * first and last message, so the time is from its start to its exit; its CPU time is what its
   * parent shell reports for it ({@code cutime + cstime}) once it exited.
   */
  private void recvlogicalToDevNull(
      Result r, long expected, String slot, String publication, String endLsn) throws Exception {
    List<String> cmd =
        List.of(
            "/bin/sh",
            "-c",
            "\"$0\" \"$@\" && cat /proc/$$/stat",
            o.pgRecvlogical,
            "--start",
            "-S",
            slot,
            "-d",
            EmbeddedPostgresServer.DEFAULT_DATABASE,
            "-h",
            EmbeddedPostgresServer.HOST,
            "-p",
            Integer.toString(pg.port()),
            "-U",
            pg.user(),
            "-o",
            PUBLICATION_PARAMS,
            "-o",
            "publication_names=" + publication,
            "-f",
            "/dev/null",
            "-F",
            "0",
            "-s",
            "1",
            "--no-loop",
            "-E",
            endLsn);
    long launched = System.nanoTime();
    Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
    }
    long ended = System.nanoTime();
    if (!p.waitFor(o.timeoutSeconds, TimeUnit.SECONDS) || p.exitValue() != 0 || out.isEmpty()) {
      p.destroyForcibly();
      throw new IllegalStateException("pg_recvlogical failed (" + out + ")");
    }
    String[] f = out.substring(out.lastIndexOf(')') + 2).split(" ");
    long ticks = Long.parseLong(f[13]) + Long.parseLong(f[14]); // fields 16 and 17: cutime, cstime
    double seconds = (ended - launched) / 1e9;
    r.put("events", expected)
        .put("complete", "endpos " + endLsn)
        .put("seconds", seconds)
        .put("eventsPerSecond", expected / seconds)
        .put("launchToLastSeconds", seconds)
        .put("peakRssMB", Double.NaN)
        .put("cpuSeconds", ticks / (double) CLK_TCK)
        .put("cpuStreamingSeconds", ticks / (double) CLK_TCK);
  }

  /** utime+stime in clock ticks and VmHWM in kB of a process, or null if it is gone. */
  static long[] procStat(long pid) {
    try {
      String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
      String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
      long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // fields 14 and 15
      long hwm = 0;
      for (String l : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
        if (l.startsWith("VmHWM:")) {
          hwm = Long.parseLong(l.replaceAll("[^0-9]", ""));
        }
      }
      return new long[] {ticks, hwm};
    } catch (IOException | RuntimeException e) {
      return null;
    }
  }

  /** Samples the CPU time of the walsender serving the slot, every 100 ms. */
  private final class WalsenderSampler extends Thread {
    final String slot;
    final AtomicLong cpuTicks = new AtomicLong();
    volatile boolean running = true;

    WalsenderSampler(String slot) {
      super("walsender-sampler");
      setDaemon(true);
      this.slot = slot;
    }

    @Override
    public void run() {
      long pid = 0;
      try (Connection c = pg.getConnection();
          Statement s = c.createStatement()) {
        while (running) {
          try (ResultSet rs =
              s.executeQuery(
                  "SELECT active_pid FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
            if (rs.next() && rs.getLong(1) > 0) {
              pid = rs.getLong(1);
            }
          }
          if (pid > 0) {
            long[] st = procStat(pid);
            if (st != null) {
              cpuTicks.accumulateAndGet(st[0], Math::max);
            }
          }
          Thread.sleep(100);
        }
      } catch (SQLException | InterruptedException e) {
        log("walsender sampler: " + e);
      }
    }

    void stopAndJoin() throws InterruptedException {
      running = false;
      join(5_000);
    }
  }

  static void log(String message) {
    System.err.println("[e2e] " + message);
  }
}
