package io.datum.cdc.benchmarks.charts;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.geom.Line2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.DecimalFormat;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.CategoryAxis;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.labels.ItemLabelAnchor;
import org.jfree.chart.labels.ItemLabelPosition;
import org.jfree.chart.labels.StandardCategoryItemLabelGenerator;
import org.jfree.chart.plot.CategoryPlot;
import org.jfree.chart.plot.PlotOrientation;
import org.jfree.chart.renderer.category.BarRenderer;
import org.jfree.chart.renderer.category.CategoryItemRendererState;
import org.jfree.chart.renderer.category.StandardBarPainter;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.TextAnchor;
import org.jfree.data.category.CategoryDataset;
import org.jfree.data.category.DefaultCategoryDataset;

/**
 * Renders the benchmark results kept in the repository to PNG charts:
 *
 * <ul>
 *   <li>{@code benchmark-e2e.png} from {@code e2e-*.json} (the end-to-end harness's {@code --out}):
 *       seconds from the consumer's start to its last event, per workload and consumer; the bar is
 *       the median of the runs, the whisker spans the fastest to the slowest run.
 *   <li>{@code benchmark-coordinator.png} from {@code coordinator.json} (JMH JSON of the
 *       coordinator benchmarks): acknowledgements per second per workload, datum-cdc's {@code
 *       FeedbackCoordinator} against Kafka Connect's {@code SubmittedRecords}, in both scopes; the
 *       whisker is JMH's 99.9% confidence interval.
 *   <li>{@code benchmark-snapshot.png} from {@code snapshot/*.json} (the snapshot harness's {@code
 *       --out}, every file in that directory): rows per second of an initial snapshot, per
 *       scenario, consumer and parallelism; the bar is the median of the measurements of all files,
 *       the whisker spans the lowest to the highest.
 * </ul>
 *
 * <pre>
 * java -Djava.awt.headless=true -cp cdc-benchmarks/target/benchmarks.jar \
 *     io.datum.cdc.benchmarks.charts.BenchmarkCharts docs/benchmark-results docs
 * </pre>
 */
public final class BenchmarkCharts {

  private static final ObjectMapper JSON = new ObjectMapper();

  private static final int WIDTH = 1100;
  private static final int HEIGHT = 620;

  private static final Color[] PALETTE = {
    new Color(0x1f77b4), new Color(0xd62728), new Color(0x7f7f7f),
    new Color(0xaec7e8), new Color(0xff9896), new Color(0xc7c7c7)
  };

  private BenchmarkCharts() {}

  /**
   * Renders the charts.
   *
   * @param args the results directory and the output directory
   * @throws IOException if a file cannot be read or written
   */
  public static void main(String[] args) throws IOException {
    if (args.length != 2) {
      System.err.println("usage: BenchmarkCharts <results dir> <output dir>");
      System.exit(2);
    }
    System.setProperty("java.awt.headless", "true");
    Path in = Path.of(args[0]);
    Path out = Path.of(args[1]);
    Files.createDirectories(out);

    Path e2e = firstMatching(in, "e2e-");
    if (e2e != null) {
      Path png = out.resolve("benchmark-e2e.png");
      ChartUtils.saveChartAsPNG(png.toFile(), endToEndChart(e2e), WIDTH, HEIGHT);
      System.out.println("wrote " + png + " from " + e2e);
    } else {
      System.err.println("no e2e-*.json in " + in);
    }
    Path coordinator = in.resolve("coordinator.json");
    if (Files.exists(coordinator)) {
      Path png = out.resolve("benchmark-coordinator.png");
      ChartUtils.saveChartAsPNG(png.toFile(), coordinatorChart(coordinator), WIDTH, HEIGHT);
      System.out.println("wrote " + png + " from " + coordinator);
    } else {
      System.err.println("no coordinator.json in " + in);
    }
    Path parallel = in.resolve("parallel.json");
    if (Files.exists(parallel)) {
      for (String handler : List.of("wait", "insert")) {
        Path png = out.resolve("benchmark-parallel-" + handler + ".png");
        ChartUtils.saveChartAsPNG(png.toFile(), parallelChart(parallel, handler), WIDTH, HEIGHT);
        System.out.println("wrote " + png + " from " + parallel);
      }
    } else {
      System.err.println("no parallel.json in " + in);
    }
    // several runs of the whole table (latency/run-*.json) win over one (latency-*.json)
    Path latency = Files.isDirectory(in.resolve("latency")) ? in.resolve("latency") : null;
    if (latency == null) {
      latency = firstMatching(in, "latency-");
    }
    if (latency != null) {
      Path png = out.resolve("benchmark-latency.png");
      ChartUtils.saveChartAsPNG(png.toFile(), latencyChart(latency), WIDTH, HEIGHT);
      System.out.println("wrote " + png + " from " + latency);
    } else {
      System.err.println("no latency-*.json in " + in);
    }
    Path snapshots = in.resolve("snapshot");
    if (Files.isDirectory(snapshots)) {
      Path png = out.resolve("benchmark-snapshot.png");
      ChartUtils.saveChartAsPNG(png.toFile(), snapshotChart(snapshots), WIDTH, HEIGHT);
      System.out.println("wrote " + png + " from " + snapshots);
    } else {
      System.err.println("no snapshot/ in " + in);
    }
  }

  private static Path firstMatching(Path dir, String prefix) throws IOException {
    try (var files = Files.list(dir)) {
      return files
          .filter(p -> p.getFileName().toString().startsWith(prefix))
          .filter(p -> p.getFileName().toString().endsWith(".json"))
          .sorted()
          .findFirst()
          .orElse(null);
    }
  }

  // ---------------------------------------------------------------- end to end

  private static final Map<String, String> CONSUMERS =
      Map.of(
          "datum", "datum-cdc",
          "debezium", "Debezium Engine",
          "pg_recvlogical", "pg_recvlogical",
          "pg_recvlogical_pipe", "pg_recvlogical (pipe)");

  private static final Map<String, String> WORKLOADS =
      Map.of(
          "a", "a: 1 transaction of %s inserts",
          "b", "b: %s inserts in 100k small transactions",
          "c", "c: %s updates of a 20 kB TOASTed column");

  static JFreeChart endToEndChart(Path file) throws IOException {
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) JSON.readValue(file.toFile(), Object.class);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> results = (List<Map<String, Object>>) root.get("results");

    // workload -> consumer -> seconds of every run, in the order of the file
    Map<String, Map<String, List<Double>>> seconds = new LinkedHashMap<>();
    Map<String, Long> events = new HashMap<>();
    int runs = 0;
    for (Map<String, Object> r : results) {
      String workload = (String) r.get("workload");
      String consumer = (String) r.get("consumer");
      Object s = r.get("launchToLastSeconds");
      if (!(s instanceof Number)) {
        continue;
      }
      seconds
          .computeIfAbsent(workload, w -> new LinkedHashMap<>())
          .computeIfAbsent(consumer, c -> new ArrayList<>())
          .add(((Number) s).doubleValue());
      events.put(workload, ((Number) r.get("expectedEvents")).longValue());
      runs = Math.max(runs, ((Number) r.get("run")).intValue());
    }

    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    Map<String, double[]> ranges = new HashMap<>();
    List<String> workloads = new ArrayList<>(seconds.keySet());
    Collections.sort(workloads);
    for (String workload : workloads) {
      String label =
          String.format(
              Locale.ROOT,
              WORKLOADS.getOrDefault(workload, workload + ": %s events"),
              String.format(Locale.ROOT, "%,d", events.get(workload)));
      for (Map.Entry<String, List<Double>> e : seconds.get(workload).entrySet()) {
        String consumer = CONSUMERS.getOrDefault(e.getKey(), e.getKey());
        List<Double> v = new ArrayList<>(e.getValue());
        Collections.sort(v);
        dataset.addValue(median(v), consumer, label);
        ranges.put(consumer + "\u0000" + label, new double[] {v.get(0), v.get(v.size() - 1)});
      }
    }

    Object scale = root.get("scale");
    JFreeChart chart =
        barChart(
            "End to end: seconds from consumer start to last event (lower is better)",
            String.format(
                Locale.ROOT,
                "median of %d runs, whisker = fastest to slowest run; --scale %s, %s cores shared,"
                    + " PostgreSQL 17.6, JDK 17, every event acknowledged",
                runs,
                scale instanceof Number
                    ? trim(((Number) scale).doubleValue())
                    : String.valueOf(scale),
                root.get("cpus") instanceof Number
                    ? String.valueOf(((Number) root.get("cpus")).intValue())
                    : "?"),
            "seconds (start to last event)",
            dataset,
            ranges,
            "%.1f");
    return chart;
  }

  private static double median(List<Double> sorted) {
    int n = sorted.size();
    return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
  }

  private static String trim(double d) {
    return d == Math.rint(d) ? String.valueOf((long) d) : String.valueOf(d);
  }

  // ---------------------------------------------------------------- snapshots

  private static final List<String> SNAPSHOT_CONSUMERS = List.of("copy", "datum", "debezium");

  private static final Map<String, String> SNAPSHOT_NAMES =
      Map.of(
          "copy", "psql COPY TO STDOUT",
          "datum", "datum-cdc",
          "debezium", "Debezium Engine");

  static JFreeChart snapshotChart(Path dir) throws IOException {
    List<Path> files;
    try (var list = Files.list(dir)) {
      files = list.filter(p -> p.toString().endsWith(".json")).sorted().toList();
    }
    // series (consumer, parallelism) -> scenario label -> rows/s of every measurement
    Map<String, Map<String, List<Double>>> bySeries = new HashMap<>();
    Map<String, String> scenarioLabels = new LinkedHashMap<>();
    List<String[]> seriesKeys = new ArrayList<>();
    Object cpus = null;
    int measurements = 0;
    List<String> failed = new ArrayList<>();
    for (Path f : files) {
      Object read = JSON.readValue(f.toFile(), Object.class);
      if (!(read instanceof Map<?, ?>)) {
        continue; // JMH's JSON (a list), kept beside the harness's files: not a harness run
      }
      @SuppressWarnings("unchecked")
      Map<String, Object> root = (Map<String, Object>) read;
      cpus = root.get("cpus");
      long rows = ((Number) root.get("rows")).longValue();
      long small = ((Number) root.get("rowsPerSmallTable")).longValue();
      scenarioLabels.putIfAbsent("one", String.format(Locale.ROOT, "one table of %,d rows", rows));
      scenarioLabels.putIfAbsent(
          "twenty", String.format(Locale.ROOT, "20 tables of %,d rows", small));
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> results = (List<Map<String, Object>>) root.get("results");
      for (Map<String, Object> r : results) {
        if (!(r.get("rowsPerSecond") instanceof Number v)
            || !Boolean.TRUE.equals(r.get("complete"))) {
          failed.add(
              SNAPSHOT_NAMES.getOrDefault((String) r.get("consumer"), (String) r.get("consumer"))
                  + " parallelism "
                  + r.get("parallelism")
                  + " on "
                  + ("one".equals(r.get("scenario")) ? "one table" : "20 tables"));
          continue;
        }
        String consumer = (String) r.get("consumer");
        String p = String.valueOf(r.get("parallelism"));
        String series = SNAPSHOT_NAMES.getOrDefault(consumer, consumer) + ", parallelism " + p;
        if (!bySeries.containsKey(series)) {
          seriesKeys.add(new String[] {consumer, p, series});
        }
        bySeries
            .computeIfAbsent(series, s -> new HashMap<>())
            .computeIfAbsent(scenarioLabels.get((String) r.get("scenario")), s -> new ArrayList<>())
            .add(v.doubleValue() / 1000);
        measurements++;
      }
    }
    seriesKeys.sort(
        (a, b) -> {
          int c =
              Integer.compare(SNAPSHOT_CONSUMERS.indexOf(a[0]), SNAPSHOT_CONSUMERS.indexOf(b[0]));
          return c != 0 ? c : Integer.compare(Integer.parseInt(a[1]), Integer.parseInt(b[1]));
        });
    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    Map<String, double[]> ranges = new HashMap<>();
    for (String[] key : seriesKeys) {
      for (String scenario : scenarioLabels.values()) {
        List<Double> v = bySeries.get(key[2]).get(scenario);
        if (v == null) {
          continue;
        }
        List<Double> sorted = new ArrayList<>(v);
        Collections.sort(sorted);
        dataset.addValue(median(sorted), key[2], scenario);
        ranges.put(
            key[2] + "\u0000" + scenario,
            new double[] {sorted.get(0), sorted.get(sorted.size() - 1)});
      }
    }
    JFreeChart chart =
        barChart(
            "Initial snapshot: thousands of rows per second (higher is better)",
            String.format(
                Locale.ROOT,
                "rows over the time from the consumer's launch to its last row; median of %d"
                    + " measurements in %d file%s, whisker = lowest to highest; %s cores,"
                    + " PostgreSQL 17, JDK 17",
                measurements,
                files.size(),
                files.size() == 1 ? "" : "s",
                cpus instanceof Number n ? String.valueOf(n.intValue()) : "?"),
            "thousand rows/s",
            dataset,
            ranges,
            "%.0f");
    if (!failed.isEmpty()) {
      Map<String, Integer> counts = new LinkedHashMap<>();
      failed.forEach(f -> counts.merge(f, 1, Integer::sum));
      List<String> parts = new ArrayList<>();
      counts.forEach((f, n) -> parts.add(f + " (" + n + "x)"));
      chart.addSubtitle(
          new TextTitle(
              "failed (no bar; see docs/benchmarks.md): " + String.join("; ", parts),
              new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
    }
    double top = 0;
    for (double[] r : ranges.values()) {
      top = Math.max(top, r[1]);
    }
    if (top > 0) {
      chart.getCategoryPlot().getRangeAxis().setUpperBound(top * 1.08);
    }
    BarRenderer renderer = (BarRenderer) chart.getCategoryPlot().getRenderer();
    renderer.setItemMargin(0.02);
    for (int i = 0; i < dataset.getRowCount(); i++) {
      String series = dataset.getRowKey(i).toString();
      int shade = series.endsWith("parallelism 1") ? 0 : series.endsWith("parallelism 2") ? 1 : 2;
      Color[] colors =
          series.startsWith("datum-cdc")
              ? new Color[] {new Color(0x1f77b4), new Color(0x5fa2d6), new Color(0xaec7e8)}
              : series.startsWith("Debezium")
                  ? new Color[] {new Color(0xd62728), new Color(0xe8625f), new Color(0xff9896)}
                  : new Color[] {new Color(0x4d4d4d), new Color(0x8c8c8c), new Color(0xc7c7c7)};
      renderer.setSeriesPaint(i, colors[shade]);
      renderer.setSeriesItemLabelPaint(i, Color.BLACK);
    }
    // above the bar: bars of a few thousand rows/s next to bars of a few hundred thousand
    renderer.setDefaultPositiveItemLabelPosition(
        new ItemLabelPosition(ItemLabelAnchor.OUTSIDE12, TextAnchor.BOTTOM_CENTER));
    renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 11));
    return chart;
  }

  // ---------------------------------------------------------------- coordinator

  static JFreeChart coordinatorChart(Path file) throws IOException {
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> benchmarks =
        (List<Map<String, Object>>) JSON.readValue(file.toFile(), Object.class);

    // series (implementation + scope) -> workload -> score
    String[] scopes = {"ack", "cycle"};
    String[][] impls = {
      {"datumCoordinator", "datum-cdc"}, {"connectSubmittedRecords", "SubmittedRecords"}
    };
    Map<String, Map<String, Map<String, Object>>> bySeries = new LinkedHashMap<>();
    for (String scope : scopes) {
      for (String[] impl : impls) {
        bySeries.put(impl[1] + " (" + scope + ")", new LinkedHashMap<>());
      }
    }
    List<String> workloads = new ArrayList<>();
    for (Map<String, Object> b : benchmarks) {
      String name = (String) b.get("benchmark");
      String method = name.substring(name.lastIndexOf('.') + 1);
      @SuppressWarnings("unchecked")
      Map<String, Object> params = (Map<String, Object>) b.get("params");
      if (params == null) {
        continue;
      }
      String impl = null;
      for (String[] i : impls) {
        if (i[0].equals(method)) {
          impl = i[1];
        }
      }
      if (impl == null) {
        continue;
      }
      String workload = (String) params.get("workload");
      if (!workloads.contains(workload)) {
        workloads.add(workload);
      }
      String series = impl + " (" + params.get("scope") + ")";
      bySeries.computeIfAbsent(series, s -> new LinkedHashMap<>()).put(workload, b);
    }
    workloads.sort(
        (x, y) -> {
          int c = Boolean.compare(x.startsWith("shuffled"), y.startsWith("shuffled"));
          return c != 0 ? c : x.compareTo(y);
        });

    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    Map<String, double[]> ranges = new HashMap<>();
    String unit = "ops/s";
    for (Map.Entry<String, Map<String, Map<String, Object>>> s : bySeries.entrySet()) {
      for (String workload : workloads) {
        Map<String, Object> b = s.getValue().get(workload);
        if (b == null) {
          continue;
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> pm = (Map<String, Object>) b.get("primaryMetric");
        unit = String.valueOf(pm.get("scoreUnit"));
        double score = ((Number) pm.get("score")).doubleValue() / 1e6;
        String label = workloadLabel(workload);
        dataset.addValue(score, s.getKey(), label);
        if (pm.get("scoreError") instanceof Number) {
          double err = ((Number) pm.get("scoreError")).doubleValue() / 1e6;
          ranges.put(s.getKey() + "\u0000" + label, new double[] {score - err, score + err});
        }
      }
    }
    return barChart(
        "Coordinator: millions of acknowledgements per second (higher is better)",
        "datum-cdc FeedbackCoordinator vs Kafka Connect SubmittedRecords, one thread, JMH 1.37;"
            + " ack = acks only, cycle = registration + acks; whisker = 99.9% CI ("
            + unit
            + ")",
        "million acks/s",
        dataset,
        ranges,
        "%.0f");
  }

  private static String workloadLabel(String workload) {
    String[] p = workload.split("_");
    if (p.length == 2 && p[0].equals("inOrder")) {
      return "in order, " + p[1] + "-event tx";
    }
    if (p.length == 2 && p[0].startsWith("shuffled")) {
      return "shuffled in " + p[0].substring("shuffled".length()) + ", " + p[1] + "-event tx";
    }
    return workload;
  }

  // ---------------------------------------------------------------- rendering

  // ---------------------------------------------------------------- parallel handlers

  private static final Map<String, String> PARALLEL_CONSUMERS =
      Map.of(
          "datum", "datum-cdc (KEY ordering)",
          "debezium_ordered", "Debezium Engine ORDERED",
          "debezium_unordered", "Debezium Engine UNORDERED");

  /**
   * Events per second of the parallel handler harness for one handler ({@code wait} or {@code
   * insert}), per thread count and consumer; the bar is the median of the runs, the whisker spans
   * the lowest to the highest.
   */
  static JFreeChart parallelChart(Path file, String handler) throws IOException {
    @SuppressWarnings("unchecked")
    Map<String, Object> root = (Map<String, Object>) JSON.readValue(file.toFile(), Object.class);
    @SuppressWarnings("unchecked")
    List<Map<String, Object>> results = (List<Map<String, Object>>) root.get("results");
    Map<Integer, Map<String, List<Double>>> rates = new java.util.TreeMap<>();
    int runs = 0;
    for (Map<String, Object> r : results) {
      if (!handler.equals(r.get("handler")) || !(r.get("eventsPerSecond") instanceof Number)) {
        continue;
      }
      rates
          .computeIfAbsent(((Number) r.get("threads")).intValue(), n -> new LinkedHashMap<>())
          .computeIfAbsent((String) r.get("consumer"), c -> new ArrayList<>())
          .add(((Number) r.get("eventsPerSecond")).doubleValue());
      runs = Math.max(runs, ((Number) r.get("run")).intValue());
    }
    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    Map<String, double[]> ranges = new HashMap<>();
    for (Map.Entry<Integer, Map<String, List<Double>>> byThreads : rates.entrySet()) {
      String label = byThreads.getKey() + (byThreads.getKey() == 1 ? " thread" : " threads");
      for (Map.Entry<String, List<Double>> e : byThreads.getValue().entrySet()) {
        String consumer = PARALLEL_CONSUMERS.getOrDefault(e.getKey(), e.getKey());
        List<Double> v = new ArrayList<>(e.getValue());
        Collections.sort(v);
        dataset.addValue(median(v), consumer, label);
        ranges.put(consumer + "\u0000" + label, new double[] {v.get(0), v.get(v.size() - 1)});
      }
    }
    String work =
        handler.equals("wait")
            ? "a handler that waits 1 ms per event"
            : "a handler that inserts each event into a second database, one transaction each";
    return barChart(
        "Parallel handlers: events per second, " + work + " (higher is better)",
        String.format(
            Locale.ROOT,
            "median of %d run(s), whisker = lowest to highest; %s cores shared with PostgreSQL 17;"
                + " updates of 10,000 rows in transactions of 10; every event acknowledged",
            runs,
            root.get("cpus")),
        "events per second",
        dataset,
        ranges,
        "%.0f");
  }

  private static final Map<String, String> LATENCY_CONSUMERS =
      Map.of(
          "datum", "datum-cdc acknowledge",
          "datum_async", "datum-cdc acknowledgeAsync",
          "pgcdc", "pgcdc stream",
          "debezium", "Debezium Engine 3.6.1",
          "pg_recvlogical", "pg_recvlogical");

  /**
   * The latency harness's p99 per consumer and load, on a logarithmic axis (the consumers differ by
   * up to four orders of magnitude); the whisker runs from the median to the largest latency. A
   * consumer that fell behind (no result) has no bar.
   */
  static JFreeChart latencyChart(Path file) throws IOException {
    Map<String, Object> root;
    List<Map<String, Object>> results;
    String runs;
    if (Files.isDirectory(file)) {
      List<Path> files;
      try (var list = Files.list(file)) {
        files = list.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
      }
      List<Map<String, Object>> roots = new ArrayList<>();
      for (Path f : files) {
        roots.add(readMap(f));
      }
      root = roots.get(0);
      results = medianCells(roots);
      runs = "median of " + roots.size() + " runs, ";
    } else {
      root = readMap(file);
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> one = (List<Map<String, Object>>) root.get("results");
      results = one;
      runs = "";
    }
    DefaultCategoryDataset dataset = new DefaultCategoryDataset();
    Map<String, double[]> ranges = new HashMap<>();
    for (Map<String, Object> r : results) {
      String consumer =
          LATENCY_CONSUMERS.getOrDefault(r.get("consumer"), (String) r.get("consumer"));
      int rows = ((Number) r.get("rowsPerTransaction")).intValue();
      String label =
          String.format(
              Locale.ROOT,
              "%,d changes/s, %s",
              ((Number) r.get("targetChangesPerSecond")).intValue(),
              rows == 1 ? "1 row/tx" : rows + " rows/tx");
      if (r.get("p99Ms") instanceof Number p99) {
        dataset.addValue(p99.doubleValue(), consumer, label);
        ranges.put(
            consumer + "\u0000" + label,
            new double[] {
              ((Number) r.get("p50Ms")).doubleValue(), ((Number) r.get("maxMs")).doubleValue()
            });
      } else {
        dataset.addValue(null, consumer, label);
      }
    }
    JFreeChart chart =
        barChart(
            "Commit-to-consumer latency under a steady load: p99 in ms (lower is better)",
            String.format(
                Locale.ROOT,
                "pgbench at a fixed rate, %s%s s measured after %s s; whisker = median to max; no"
                    + " bar: fell behind; 2 cores shared by PostgreSQL 17, pgbench and the consumer",
                runs,
                root.get("seconds"),
                root.get("warmup")),
            "p99 latency, ms (log scale)",
            dataset,
            ranges,
            "%.1f");
    org.jfree.chart.axis.LogAxis log =
        new org.jfree.chart.axis.LogAxis("p99 latency, ms (log scale)");
    log.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    log.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    log.setSmallestValue(0.1);
    log.setRange(0.1, 100_000);
    log.setNumberFormatOverride(new DecimalFormat("#,##0.#"));
    log.setTickUnit(new org.jfree.chart.axis.NumberTickUnit(1)); // one tick per decade
    CategoryPlot plot = chart.getCategoryPlot();
    plot.setRangeAxis(log);
    BarRenderer renderer = (BarRenderer) plot.getRenderer();
    renderer.setBase(0.1);
    renderer.setDefaultItemLabelsVisible(false);
    Map<String, Color> colors =
        Map.of(
            "datum-cdc acknowledge", new Color(0x9ecae1),
            "datum-cdc acknowledgeAsync", new Color(0x1f77b4),
            "pgcdc stream", new Color(0x2ca02c),
            "Debezium Engine 3.6.1", new Color(0xd62728),
            "pg_recvlogical", new Color(0x7f7f7f));
    for (int i = 0; i < dataset.getRowCount(); i++) {
      Color c = colors.get(dataset.getRowKey(i).toString());
      if (c != null) {
        renderer.setSeriesPaint(i, c);
      }
    }
    plot.getDomainAxis().setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    return chart;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> readMap(Path file) throws IOException {
    return (Map<String, Object>) JSON.readValue(file.toFile(), Object.class);
  }

  /**
   * One cell per consumer, transaction size and rate, in the first run's order: the median run's
   * p50, p99 and max by p99 (a run that fell behind counts as the slowest); no p99 if most runs
   * fell behind.
   */
  @SuppressWarnings("unchecked")
  static List<Map<String, Object>> medianCells(List<Map<String, Object>> roots) {
    Map<String, List<Map<String, Object>>> cells = new LinkedHashMap<>();
    for (Map<String, Object> root : roots) {
      for (Map<String, Object> r : (List<Map<String, Object>>) root.get("results")) {
        String key =
            r.get("consumer")
                + "/"
                + r.get("rowsPerTransaction")
                + "/"
                + r.get("targetChangesPerSecond");
        cells.computeIfAbsent(key, k -> new ArrayList<>()).add(r);
      }
    }
    List<Map<String, Object>> out = new ArrayList<>();
    for (List<Map<String, Object>> runs : cells.values()) {
      List<Map<String, Object>> sorted = new ArrayList<>(runs);
      sorted.sort(
          (a, b) ->
              Double.compare(
                  a.get("p99Ms") instanceof Number n ? n.doubleValue() : Double.MAX_VALUE,
                  b.get("p99Ms") instanceof Number m ? m.doubleValue() : Double.MAX_VALUE));
      out.add(sorted.get((sorted.size() - 1) / 2));
    }
    return out;
  }

  private static JFreeChart barChart(
      String title,
      String subtitle,
      String valueAxis,
      DefaultCategoryDataset dataset,
      Map<String, double[]> ranges,
      String labelFormat) {
    CategoryAxis domain = new CategoryAxis(null);
    domain.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    domain.setCategoryMargin(0.25);
    domain.setMaximumCategoryLabelLines(2);
    domain.setMaximumCategoryLabelWidthRatio(1.2f);
    NumberAxis range = new NumberAxis(valueAxis);
    range.setLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    range.setTickLabelFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    range.setUpperMargin(0.12);

    RangeBarRenderer renderer = new RangeBarRenderer(ranges);
    renderer.setBarPainter(new StandardBarPainter());
    renderer.setShadowVisible(false);
    renderer.setItemMargin(0.04);
    renderer.setDrawBarOutline(false);
    for (int i = 0; i < dataset.getRowCount(); i++) {
      String series = dataset.getRowKey(i).toString();
      renderer.setSeriesPaint(i, seriesColor(series, i));
      // values written inside the bar, at its foot, clear of the whiskers
      renderer.setSeriesItemLabelPaint(i, light(series) ? Color.BLACK : Color.WHITE);
    }
    renderer.setDefaultPositiveItemLabelPosition(
        new ItemLabelPosition(ItemLabelAnchor.INSIDE6, TextAnchor.BOTTOM_CENTER));
    renderer.setDefaultItemLabelGenerator(
        new StandardCategoryItemLabelGenerator(
            "{2}", new DecimalFormat(decimalPattern(labelFormat))));
    renderer.setDefaultItemLabelsVisible(true);
    renderer.setDefaultItemLabelFont(new Font(Font.SANS_SERIF, Font.BOLD, 13));
    renderer.setItemLabelAnchorOffset(4);

    CategoryPlot plot = new CategoryPlot(dataset, domain, range, renderer);
    plot.setOrientation(PlotOrientation.VERTICAL);
    plot.setBackgroundPaint(Color.WHITE);
    plot.setRangeGridlinePaint(new Color(0xdddddd));
    plot.setRangeGridlinesVisible(true);
    plot.setOutlineVisible(false);

    JFreeChart chart = new JFreeChart(title, new Font(Font.SANS_SERIF, Font.BOLD, 18), plot, true);
    chart.addSubtitle(new TextTitle(subtitle, new Font(Font.SANS_SERIF, Font.PLAIN, 12)));
    chart.getLegend().setItemFont(new Font(Font.SANS_SERIF, Font.PLAIN, 14));
    chart.setBackgroundPaint(Color.WHITE);
    return chart;
  }

  /** The second series of a tool: its light color (a coordinator's cycle scope, UNORDERED). */
  private static boolean light(String series) {
    return series.contains("(cycle)") || series.contains("UNORDERED");
  }

  private static String decimalPattern(String format) {
    return format.equals("%.0f") ? "#,##0" : "#,##0.0";
  }

  private static Color seriesColor(String series, int index) {
    boolean light = light(series);
    if (series.startsWith("datum-cdc")) {
      return light ? PALETTE[3] : PALETTE[0];
    }
    if (series.startsWith("Debezium") || series.startsWith("SubmittedRecords")) {
      return light ? PALETTE[4] : PALETTE[1];
    }
    if (series.startsWith("pg_recvlogical")) {
      return PALETTE[2];
    }
    return PALETTE[index % PALETTE.length];
  }

  /** A bar renderer that also draws a whisker from a low to a high value over each bar. */
  private static final class RangeBarRenderer extends BarRenderer {
    private static final long serialVersionUID = 1L;
    private final transient Map<String, double[]> ranges;

    RangeBarRenderer(Map<String, double[]> ranges) {
      this.ranges = ranges;
    }

    @Override
    public void drawItem(
        Graphics2D g2,
        CategoryItemRendererState state,
        Rectangle2D dataArea,
        CategoryPlot plot,
        CategoryAxis domainAxis,
        ValueAxis rangeAxis,
        CategoryDataset dataset,
        int row,
        int column,
        int pass) {
      super.drawItem(g2, state, dataArea, plot, domainAxis, rangeAxis, dataset, row, column, pass);
      if (pass != 0) {
        return;
      }
      double[] r = ranges.get(dataset.getRowKey(row) + "\u0000" + dataset.getColumnKey(column));
      if (r == null || r[1] - r[0] <= 0) {
        return;
      }
      int visibleRow = state.getVisibleSeriesIndex(row);
      if (visibleRow < 0) {
        return;
      }
      double barW0 =
          calculateBarW0(
              plot, plot.getOrientation(), dataArea, domainAxis, state, visibleRow, column);
      double x = barW0 + state.getBarWidth() / 2;
      RectangleEdge edge = plot.getRangeAxisEdge();
      double lo = rangeAxis.valueToJava2D(r[0], dataArea, edge);
      double hi = rangeAxis.valueToJava2D(r[1], dataArea, edge);
      double cap = Math.min(8, state.getBarWidth() / 4);
      g2.setPaint(Color.BLACK);
      g2.setStroke(new BasicStroke(1.5f));
      g2.draw(new Line2D.Double(x, lo, x, hi));
      g2.draw(new Line2D.Double(x - cap, lo, x + cap, lo));
      g2.draw(new Line2D.Double(x - cap, hi, x + cap, hi));
    }
  }
}
