package io.datum.cdc.benchmarks.prometheus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.net.ServerSocket;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Proves the meters with a real Prometheus: starts an embedded PostgreSQL, a {@code pgcdc stream
 * --metrics-port} on it, and the {@code prometheus} server (Debian's package) scraping it every
 * second with the repository's alert rules loaded; runs a workload in four phases (steady, consumer
 * stuck, catching up, idle); then reads the lag, rate and watermark-age series back through
 * Prometheus' HTTP API ({@code /api/v1/query_range}), checks that every series the alert rules name
 * exists and that Prometheus evaluates every rule without error, writes the series as JSON and
 * draws them ({@link PrometheusChart}).
 *
 * <p>The consumer is this program reading {@code pgcdc}'s stdout: while "stuck" it stops reading,
 * the pipe fills, pgcdc's handler blocks on its write and acknowledges nothing, so the slot's
 * confirmed_flush_lsn stays while the workload goes on: the lag a stuck application causes.
 *
 * <pre>
 * docs/prometheus/run-demo    (builds the jars, then runs this class)
 * </pre>
 */
public final class PrometheusDemo {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String SLOT = "prom_demo";
  private static final HttpClient HTTP =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  /** The workload's phases, in seconds. */
  record Phase(String name, int seconds, boolean writing, boolean consuming) {}

  static final List<Phase> PHASES =
      List.of(
          new Phase("steady", 20, true, true),
          new Phase("consumer stuck", 20, true, false),
          new Phase("catching up", 20, true, true),
          new Phase("idle", 15, false, true));

  /** Rows inserted per second while writing, in transactions of 50. */
  static final int ROWS_PER_SECOND = 2_000;

  private PrometheusDemo() {}

  /**
   * Runs the demo.
   *
   * @param args {@code PGCDC_JAR PROMETHEUS_BINARY ALERT_RULES GRAFANA_DASHBOARD OUT_JSON OUT_PNG}
   * @throws Exception if a part cannot start or a check fails (the message says which)
   */
  public static void main(String[] args) throws Exception {
    if (args.length != 6) {
      System.err.println(
          "usage: PrometheusDemo <pgcdc.jar> <prometheus binary> <alert rules.yml>"
              + " <grafana dashboard.json> <out.json> <out.png>");
      System.exit(2);
    }
    Path pgcdcJar = Path.of(args[0]);
    Path prometheus = Path.of(args[1]);
    Path rules = Path.of(args[2]).toAbsolutePath();
    Path dashboard = Path.of(args[3]);
    Path outJson = Path.of(args[4]);
    Path outPng = Path.of(args[5]);
    Path work = Files.createTempDirectory("datum-cdc-prometheus-demo");
    int metricsPort = freePort();
    int prometheusPort = freePort();
    log("embedded PostgreSQL 17 starting; work directory " + work);
    try (EmbeddedPostgresServer pg = EmbeddedPostgresServer.builder().start()) {
      pg.execute(
          "CREATE TABLE orders (id bigint PRIMARY KEY, payload text NOT NULL)",
          "CREATE PUBLICATION prom_demo FOR TABLE orders",
          "SELECT pg_create_logical_replication_slot('" + SLOT + "', 'pgoutput')");
      Process server = startPrometheus(prometheus, work, rules, metricsPort, prometheusPort);
      Process pgcdc = null;
      try {
        String api = "http://127.0.0.1:" + prometheusPort;
        awaitHttp(URI.create(api + "/-/ready"), Duration.ofSeconds(60), "Prometheus");
        pgcdc = startPgcdc(pgcdcJar, pg, work, metricsPort);
        awaitHttp(
            URI.create("http://127.0.0.1:" + metricsPort + "/health"),
            Duration.ofSeconds(60),
            "pgcdc's /health");
        Consumer consumer = new Consumer(pgcdc.getInputStream());
        consumer.start();
        double start = System.currentTimeMillis() / 1000.0;
        List<Map<String, Object>> marks = runWorkload(pg, consumer, start);
        // the last scrapes after the idle phase
        Thread.sleep(3_000); // lets Prometheus scrape the end state; not synchronisation
        double end = System.currentTimeMillis() / 1000.0;
        ObjectNode result = JSON.createObjectNode();
        result.put("prometheus", version(prometheus));
        result.put("scrapeIntervalSeconds", 1);
        result.put("rowsPerSecond", ROWS_PER_SECOND);
        result.put("start", start);
        result.put("end", end);
        result.put("eventsRead", consumer.lines.get());
        result.set("phases", JSON.valueToTree(marks));
        List<String> failures = new ArrayList<>();
        ObjectNode series = result.putObject("series");
        series.set(
            "lagBytes",
            range(
                api,
                "max(datum_cdc_replication_lag_bytes{slot=\"" + SLOT + "\"})",
                start,
                end,
                failures));
        series.set(
            "eventsPerSecond",
            range(
                api,
                "sum(rate(datum_cdc_events_delivered_events_total{slot=\"" + SLOT + "\"}[5s]))",
                start,
                end,
                failures));
        series.set(
            "watermarkAgeSeconds",
            range(
                api,
                "max(datum_cdc_watermark_age_seconds{slot=\"" + SLOT + "\"})",
                start,
                end,
                failures));
        result.set("ruleChecks", checkRules(api, rules, failures));
        result.set(
            "dashboardSeries", checkSeries(api, dashboard, "the Grafana dashboard", failures));
        result.set("failures", JSON.valueToTree(failures));
        Files.createDirectories(outJson.toAbsolutePath().getParent());
        JSON.writerWithDefaultPrettyPrinter().writeValue(outJson.toFile(), result);
        log("wrote " + outJson);
        PrometheusChart.draw(result, outPng);
        log("wrote " + outPng);
        if (!failures.isEmpty()) {
          throw new IllegalStateException(
              failures.size() + " check(s) failed:\n  " + String.join("\n  ", failures));
        }
      } finally {
        if (pgcdc != null) {
          pgcdc.destroy();
          pgcdc.waitFor(30, TimeUnit.SECONDS);
        }
        server.destroy();
        server.waitFor(30, TimeUnit.SECONDS);
      }
    } finally {
      deleteTree(work);
    }
  }

  private static Process startPrometheus(
      Path binary, Path work, Path rules, int metricsPort, int port) throws IOException {
    Path config = work.resolve("prometheus.yml");
    Files.writeString(
        config,
        "global:\n"
            + "  scrape_interval: 1s\n"
            + "  evaluation_interval: 1s\n"
            + "rule_files:\n"
            + "  - "
            + rules
            + "\n"
            + "scrape_configs:\n"
            + "  - job_name: pgcdc\n"
            + "    static_configs:\n"
            + "      - targets: ['127.0.0.1:"
            + metricsPort
            + "']\n");
    log("prometheus on 127.0.0.1:" + port + ", scraping 127.0.0.1:" + metricsPort + " every 1 s");
    return new ProcessBuilder(
            binary.toString(),
            "--config.file=" + config,
            "--storage.tsdb.path=" + work.resolve("tsdb"),
            "--web.listen-address=127.0.0.1:" + port)
        .redirectErrorStream(true)
        .redirectOutput(work.resolve("prometheus.log").toFile())
        .start();
  }

  private static Process startPgcdc(Path jar, EmbeddedPostgresServer pg, Path work, int metricsPort)
      throws IOException {
    List<String> cmd =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-jar",
            jar.toString(),
            "stream",
            "--url",
            pg.jdbcUrl(),
            "--user",
            pg.user(),
            "--slot",
            SLOT,
            "--publication",
            "prom_demo",
            "--store",
            "file:" + work.resolve("store"),
            "--metrics-port",
            Integer.toString(metricsPort),
            "--metrics-address",
            "127.0.0.1");
    log("pgcdc stream --metrics-port " + metricsPort);
    return new ProcessBuilder(cmd).redirectError(work.resolve("pgcdc.err").toFile()).start();
  }

  /** Reads pgcdc's stdout unless paused: a paused reader is a stuck application. */
  private static final class Consumer extends Thread {
    private final InputStream in;
    private final AtomicBoolean paused = new AtomicBoolean();
    private final AtomicLong lines = new AtomicLong();

    Consumer(InputStream in) {
      super("demo-consumer");
      setDaemon(true);
      this.in = in;
    }

    @Override
    public void run() {
      byte[] buffer = new byte[8192];
      try {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          for (int i = 0; i < n; i++) {
            if (buffer[i] == '\n') {
              lines.incrementAndGet();
            }
          }
          while (paused.get()) {
            Thread.sleep(50); // the stuck application: reads nothing
          }
        }
      } catch (IOException e) {
        log("pgcdc's stdout: " + e);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  private static List<Map<String, Object>> runWorkload(
      EmbeddedPostgresServer pg, Consumer consumer, double start) throws Exception {
    List<Map<String, Object>> marks = new ArrayList<>();
    long id = 0;
    try (Connection c = pg.getConnection();
        PreparedStatement insert =
            c.prepareStatement("INSERT INTO orders VALUES (?, repeat('x', 200))")) {
      c.setAutoCommit(false);
      int perTransaction = 50;
      long nanosPerTransaction = TimeUnit.SECONDS.toNanos(1) * perTransaction / ROWS_PER_SECOND;
      for (Phase phase : PHASES) {
        Map<String, Object> mark = new LinkedHashMap<>();
        mark.put("name", phase.name());
        mark.put("at", System.currentTimeMillis() / 1000.0 - start);
        marks.add(mark);
        consumer.paused.set(!phase.consuming());
        log(
            "phase "
                + phase.name()
                + " ("
                + phase.seconds()
                + " s): "
                + (phase.writing() ? ROWS_PER_SECOND + " rows/s" : "no writes")
                + ", consumer "
                + (phase.consuming() ? "reading" : "stuck"));
        long phaseEnd = System.nanoTime() + TimeUnit.SECONDS.toNanos(phase.seconds());
        long next = System.nanoTime();
        while (System.nanoTime() < phaseEnd) {
          if (phase.writing()) {
            for (int i = 0; i < perTransaction; i++) {
              insert.setLong(1, ++id);
              insert.addBatch();
            }
            insert.executeBatch();
            c.commit();
          }
          next += nanosPerTransaction;
          long wait = next - System.nanoTime();
          if (wait > 0) {
            TimeUnit.NANOSECONDS.sleep(wait); // paces the workload; not synchronisation
          }
        }
      }
    }
    log(id + " rows written; the consumer read " + consumer.lines.get() + " lines");
    return marks;
  }

  /** Reads a range query's single series as [[seconds since start, value], ...]. */
  private static ArrayNode range(
      String api, String query, double start, double end, List<String> failures) throws Exception {
    String url =
        api
            + "/api/v1/query_range?query="
            + URLEncoder.encode(query, StandardCharsets.UTF_8)
            + "&start="
            + start
            + "&end="
            + end
            + "&step=1";
    JsonNode body = get(URI.create(url));
    JsonNode results = body.path("data").path("result");
    if (!"success".equals(body.path("status").asText()) || results.size() != 1) {
      failures.add("Prometheus has no single series for " + query + ": " + body);
      return null;
    }
    ArrayNode points = JSON.createArrayNode();
    for (JsonNode v : results.get(0).path("values")) {
      ArrayNode p = points.addArray();
      p.add(Math.round((v.get(0).asDouble() - start) * 1000) / 1000.0);
      p.add(Double.parseDouble(v.get(1).asText()));
    }
    log(query + ": " + points.size() + " points");
    return points;
  }

  /**
   * Every datum_cdc series an alert rule names must exist in Prometheus (a renamed meter would
   * leave a rule that never fires), and Prometheus must evaluate every rule with health "ok".
   */
  private static ObjectNode checkRules(String api, Path rules, List<String> failures)
      throws Exception {
    ObjectNode out = JSON.createObjectNode();
    ArrayNode found = checkSeries(api, rules, "the alert rules", failures);
    out.set("seriesNamedByRules", found);
    ArrayNode checked = out.putArray("rules");
    JsonNode groups = get(URI.create(api + "/api/v1/rules")).path("data").path("groups");
    for (JsonNode group : groups) {
      for (JsonNode rule : group.path("rules")) {
        String health = rule.path("health").asText();
        if (!"ok".equals(health)) {
          failures.add(
              "Prometheus evaluates rule "
                  + rule.path("name").asText()
                  + " as "
                  + health
                  + ": "
                  + rule);
        }
        ObjectNode r = checked.addObject();
        r.put("name", rule.path("name").asText());
        r.put("health", health);
        r.put("state", rule.path("state").asText());
      }
    }
    if (checked.isEmpty()) {
      failures.add("Prometheus loaded no rule from " + rules);
    }
    log(checked.size() + " rules loaded");
    return out;
  }

  /**
   * Every datum_cdc series a file names (alert rules, a dashboard) must exist in Prometheus: a
   * renamed meter would leave a rule that never fires, a panel that stays empty.
   */
  private static ArrayNode checkSeries(String api, Path file, String what, List<String> failures)
      throws Exception {
    Set<String> names = new TreeSet<>();
    Matcher m = Pattern.compile("datum_cdc_[a-z_]+").matcher(Files.readString(file));
    while (m.find()) {
      names.add(m.group());
    }
    ArrayNode found = JSON.createArrayNode();
    for (String name : names) {
      JsonNode series =
          get(
              URI.create(
                  api
                      + "/api/v1/series?match[]="
                      + URLEncoder.encode(name, StandardCharsets.UTF_8)));
      if (series.path("data").isEmpty()) {
        failures.add(what + " name " + name + ", which pgcdc's /metrics does not export");
      } else {
        found.add(name);
      }
    }
    log(found.size() + " of the " + names.size() + " series " + what + " name exist");
    return found;
  }

  private static JsonNode get(URI uri) throws Exception {
    HttpResponse<String> r =
        HTTP.send(
            HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(30)).build(),
            HttpResponse.BodyHandlers.ofString());
    if (r.statusCode() != 200) {
      throw new IllegalStateException(uri + " answered " + r.statusCode() + ": " + r.body());
    }
    return JSON.readTree(r.body());
  }

  private static void awaitHttp(URI uri, Duration timeout, String what) throws Exception {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      try {
        HttpResponse<Void> r =
            HTTP.send(HttpRequest.newBuilder(uri).build(), HttpResponse.BodyHandlers.discarding());
        if (r.statusCode() == 200) {
          return;
        }
      } catch (IOException notYet) {
        // not listening yet
      }
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(what + " did not answer 200 at " + uri + " in " + timeout);
      }
      Thread.sleep(200); // polling a process that starts; not synchronisation of this program
    }
  }

  private static String version(Path prometheus) throws Exception {
    Process p =
        new ProcessBuilder(prometheus.toString(), "--version").redirectErrorStream(true).start();
    String first =
        new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8)
            .lines()
            .findFirst()
            .orElse("");
    p.waitFor(10, TimeUnit.SECONDS);
    return first;
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      return s.getLocalPort();
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    try (var paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
  }

  private static void log(String line) {
    System.err.println("prometheus-demo: " + line);
  }
}
