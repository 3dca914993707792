package io.datum.cdc.benchmarks.connect;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.benchmarks.e2e.WalsenderSampler;
import io.datum.cdc.benchmarks.e2e.Workload;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.rest.entities.ConnectorStateInfo;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.apache.kafka.connect.util.clusters.WorkerHandle;

/**
 * Changes per second into Kafka of datum-cdc's source connector and Debezium's PostgreSQL connector
 * on one in-JVM Kafka Connect cluster (one KRaft broker, one distributed worker, JSON without
 * schemas) against one embedded PostgreSQL 17, with the end-to-end benchmark's {@link Workload}s.
 *
 * <p>For each workload, one table and publication, and one pgoutput slot per {@link Setup}, all
 * created before the workload is written once: every setup then drains the same backlog from its
 * own slot. A measurement creates the connector's topic (one partition), starts a consumer on it
 * ({@code read_committed} for the exactly-once setups), creates the connector, and takes the time
 * from the REST call creating it until the consumer has seen every change; changes/s is that number
 * over that time. The worker runs with {@code exactly.once.source.support=enabled} for the
 * exactly-once setups only (a worker with it enabled writes every source connector in
 * transactions), so between setups of different modes the worker is replaced (not timed): same
 * broker, same JVM. See {@code cdc-kafka-connect-benchmarks/README.md}.
 */
public final class ConnectHarness implements AutoCloseable {
  private static final ObjectMapper JSON = new ObjectMapper();

  private final EmbeddedPostgresServer pg;
  private final Map<String, String> workerProps;
  private final EmbeddedConnectCluster connect;
  private boolean workerExactlyOnce;

  private ConnectHarness(EmbeddedPostgresServer pg) {
    this.pg = pg;
    // the map is the cluster's own (not copied): a worker added later reads it as it is then
    workerProps = new HashMap<>();
    workerProps.put("key.converter", JsonConverter.class.getName());
    workerProps.put("value.converter", JsonConverter.class.getName());
    workerProps.put("key.converter.schemas.enable", "false");
    workerProps.put("value.converter.schemas.enable", "false");
    // both connectors declare themselves to ServiceLoader: no scan of the whole classpath
    workerProps.put("plugin.discovery", "service_load");
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("auto.create.topics.enable", "false");
    connect =
        new EmbeddedConnectCluster.Builder()
            .name("connect-benchmark")
            .numWorkers(1)
            .workerProps(workerProps)
            .brokerProps(broker)
            .numBrokers(1)
            .build();
    connect.start();
  }

  /**
   * Starts the Connect cluster (one broker, one worker without exactly-once support).
   *
   * @param pg the server the connectors read
   */
  public static ConnectHarness start(EmbeddedPostgresServer pg) {
    return new ConnectHarness(pg);
  }

  /**
   * Writes a workload once and measures each setup draining it, in the given order.
   *
   * @param w the workload
   * @param scale its scale (1: the sizes)
   * @param order the setups, in the order they run
   * @param tag distinguishes this round's table, slots and topics (a run number)
   * @param timeoutSeconds how long one setup may take to deliver every change
   * @return one result per setup, in the order run: named values (see the README)
   */
  public List<Map<String, Object>> measure(
      Workload w, double scale, List<Setup> order, String tag, long timeoutSeconds)
      throws Exception {
    String base = ("cb_" + w.name() + "_" + tag).toLowerCase(Locale.ROOT);
    String table = base, publication = base + "_pub";
    long expected;
    try (Connection c = pg.getConnection();
        Statement s = c.createStatement()) {
      for (Setup setup : order) {
        dropSlotIfExists(s, slot(base, setup));
      }
      s.execute("DROP TABLE IF EXISTS " + table);
      s.execute("DROP PUBLICATION IF EXISTS " + publication);
      w.create(s, table, scale);
      s.execute("CREATE PUBLICATION " + publication + " FOR TABLE " + table);
      for (Setup setup : order) {
        s.execute(
            "SELECT pg_create_logical_replication_slot('" + slot(base, setup) + "', 'pgoutput')");
      }
      log(w + " " + tag + ": writing " + w.description + " at scale " + scale);
      long t0 = System.nanoTime();
      s.execute("SET synchronous_commit = off");
      w.write(s, table, scale);
      s.execute("SET synchronous_commit = on");
      try (ResultSet rs = s.executeQuery(w.expectedEventsSql(table))) {
        rs.next();
        expected = rs.getLong(1);
      }
      log(String.format(Locale.ROOT, "wrote %,d changes in %.1f s", expected, secondsSince(t0)));
      s.execute("CHECKPOINT");
    }
    List<Map<String, Object>> results = new ArrayList<>();
    try {
      for (Setup setup : order) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("workload", w.name().toLowerCase(Locale.ROOT));
        r.put("setup", setup.label);
        r.put("tag", tag);
        r.put("scale", scale);
        r.put("expectedEvents", expected);
        try {
          run(setup, base, table, publication, expected, timeoutSeconds, r);
        } catch (Exception e) {
          log(w + "/" + setup + " " + tag + " failed: " + e);
          r.put("error", String.valueOf(e));
        }
        log("result " + JSON.writeValueAsString(r));
        results.add(r);
      }
    } finally {
      try (Connection c = pg.getConnection();
          Statement s = c.createStatement()) {
        for (Setup setup : order) {
          awaitSlotInactive(s, slot(base, setup));
          dropSlotIfExists(s, slot(base, setup));
        }
        s.execute("DROP PUBLICATION IF EXISTS " + publication);
        s.execute("DROP TABLE IF EXISTS " + table);
        s.execute("CHECKPOINT");
      }
    }
    return results;
  }

  private void run(
      Setup setup,
      String base,
      String table,
      String publication,
      long expected,
      long timeoutSeconds,
      Map<String, Object> r)
      throws Exception {
    useWorker(setup.exactlyOnce);
    String name = base + "_" + setup.label;
    String slot = slot(base, setup);
    String topic = name + ".public." + table;
    connect.kafka().createTopic(topic, 1);
    Map<String, String> config = setup.config(pg, name, slot, publication, table);
    TopicCounter counter =
        new TopicCounter(connect.kafka(), topic, setup.exactlyOnce, expected, "bench-consumer");
    counter.start();
    counter.awaitAssigned();
    WalsenderSampler walsender = new WalsenderSampler(pg, slot);
    walsender.start();
    ThreadCpu cpu0 = ThreadCpu.now();
    long t0 = System.nanoTime();
    connect.configureConnector(name, config);
    boolean done = counter.awaitDone(timeoutSeconds, () -> failure(name));
    long t1 = System.nanoTime();
    ThreadCpu cpu1 = ThreadCpu.now();
    walsender.stopAndJoin();
    String failed = failure(name);
    connect.deleteConnector(name);
    counter.stopAndJoin();
    double seconds = (t1 - t0) / 1e9;
    r.put("events", counter.count());
    r.put("seconds", seconds);
    r.put("changesPerSecond", counter.count() / seconds);
    r.put("startToFirstSeconds", (counter.firstNanos() - t0) / 1e9);
    r.put("firstToLastSeconds", (counter.lastNanos() - counter.firstNanos()) / 1e9);
    r.put("topicEndOffset", counter.endOffset());
    Map<String, Double> groups = cpu1.since(cpu0, name, "bench-consumer");
    groups.forEach((k, v) -> r.put("cpu." + k, v));
    r.put("cpu.walsender", walsender.cpuSeconds());
    r.put("topThreads", cpu1.top(cpu0, 8));
    if (!done) {
      r.put(
          "error",
          failed != null
              ? "task failed: " + failed
              : "timed out after " + timeoutSeconds + " s with " + counter.count() + " changes");
    }
  }

  /** Returns the task's failure trace (first line) if the connector or its task failed. */
  private String failure(String connector) {
    try {
      ConnectorStateInfo status = connect.connectorStatus(connector);
      if ("FAILED".equals(status.connector().state())) {
        return firstLine(status.connector().trace());
      }
      for (ConnectorStateInfo.TaskState t : status.tasks()) {
        if ("FAILED".equals(t.state())) {
          return firstLine(t.trace());
        }
      }
    } catch (RuntimeException e) {
      // not created yet, or the REST call failed: not a failure of the connector
    }
    return null;
  }

  private static String firstLine(String trace) {
    return trace == null ? "(no trace)" : trace.lines().limit(3).reduce("", (a, b) -> a + b + " ");
  }

  /** Replaces the worker by one with or without exactly-once support, if it is not that already. */
  private void useWorker(boolean exactlyOnce) throws InterruptedException {
    if (workerExactlyOnce == exactlyOnce) {
      return;
    }
    for (WorkerHandle w : new ArrayList<>(connect.workers())) {
      connect.removeWorker(w);
    }
    if (exactlyOnce) {
      workerProps.put("exactly.once.source.support", "enabled");
    } else {
      workerProps.remove("exactly.once.source.support");
    }
    connect.addWorker();
    connect
        .assertions()
        .assertAtLeastNumWorkersAreUp(1, "the worker did not start after replacing it");
    workerExactlyOnce = exactlyOnce;
    log("worker replaced: exactly.once.source.support " + (exactlyOnce ? "enabled" : "disabled"));
  }

  private static String slot(String base, Setup setup) {
    return base + "_" + setup.label;
  }

  private static void dropSlotIfExists(Statement s, String slot) throws SQLException {
    try (ResultSet rs =
        s.executeQuery("SELECT 1 FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
      if (!rs.next()) {
        return;
      }
    }
    s.execute("SELECT pg_drop_replication_slot('" + slot + "')");
  }

  private static void awaitSlotInactive(Statement s, String slot)
      throws SQLException, InterruptedException {
    long deadline = System.nanoTime() + 60_000_000_000L;
    while (System.nanoTime() < deadline) {
      try (ResultSet rs =
          s.executeQuery(
              "SELECT active FROM pg_replication_slots WHERE slot_name = '" + slot + "'")) {
        if (!rs.next() || !rs.getBoolean(1)) {
          return;
        }
      }
      Thread.sleep(100); // polling the server, outside any measured interval
    }
    s.execute(
        "SELECT pg_terminate_backend(active_pid) FROM pg_replication_slots WHERE slot_name = '"
            + slot
            + "' AND active_pid IS NOT NULL");
  }

  @Override
  public void close() {
    connect.stop();
  }

  /**
   * Runs the benchmark: see the README for the options and the results.
   *
   * @param args the options ({@code --help})
   */
  public static void main(String[] args) throws Exception {
    ConnectOptions o = ConnectOptions.parse(args);
    log("starting the embedded PostgreSQL 17");
    List<Map<String, Object>> all = new ArrayList<>();
    try (EmbeddedPostgresServer pg =
            EmbeddedPostgresServer.builder().setting("max_wal_size", "4GB").start();
        ConnectHarness h = start(pg)) {
      log("PostgreSQL on port " + pg.port() + "; Connect cluster started");
      if (o.warmupScale > 0) {
        log("warm-up (not reported): workload B at scale " + o.warmupScale);
        h.measure(Workload.B, o.warmupScale, o.setups, "warmup", o.timeoutSeconds);
      }
      for (int run = 1; run <= o.runs; run++) {
        for (int k = 0; k < o.workloads.size(); k++) {
          Workload w = o.workloads.get(k);
          List<Setup> order = order(o.setups, run, k);
          log(w + " run " + run + ": order " + order);
          for (Map<String, Object> r : h.measure(w, o.scale, order, "r" + run, o.timeoutSeconds)) {
            r.put("run", run);
            all.add(r);
          }
          if (o.out != null) {
            write(o, all);
          }
        }
      }
    }
    System.out.println();
    System.out.println(Summary.table(o, all));
    System.exit(0);
  }

  /**
   * The order of the setups in one round: the setups of one worker mode together (one worker
   * replacement per round), the mode that goes first alternating between rounds, and the setups
   * within a mode rotated by run, so no setup always runs first or last.
   */
  static List<Setup> order(List<Setup> setups, int run, int workloadIndex) {
    List<Setup> off = new ArrayList<>(), on = new ArrayList<>();
    for (Setup s : setups) {
      (s.exactlyOnce ? on : off).add(s);
    }
    java.util.Collections.rotate(off, run);
    java.util.Collections.rotate(on, run);
    List<Setup> out = new ArrayList<>();
    boolean offFirst = (run + workloadIndex) % 2 == 1;
    out.addAll(offFirst ? off : on);
    out.addAll(offFirst ? on : off);
    return out;
  }

  private static void write(ConnectOptions o, List<Map<String, Object>> results)
      throws java.io.IOException {
    Map<String, Object> root = new LinkedHashMap<>();
    root.put("scale", o.scale);
    root.put("runs", o.runs);
    root.put("cpus", Runtime.getRuntime().availableProcessors());
    root.put("maxHeapMB", Runtime.getRuntime().maxMemory() >> 20);
    root.put("results", results);
    JSON.writerWithDefaultPrettyPrinter().writeValue(Path.of(o.out).toFile(), root);
  }

  private static double secondsSince(long t0) {
    return (System.nanoTime() - t0) / 1e9;
  }

  static void log(String message) {
    System.err.println("[connect-bench] " + message);
  }
}
