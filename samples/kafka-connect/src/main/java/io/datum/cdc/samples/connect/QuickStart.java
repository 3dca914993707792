package io.datum.cdc.samples.connect;

import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.errors.WakeupException;

/**
 * The Kafka Connect quick start of docs/kafka-connect.md on this machine, in one command ({@code
 * samples/kafka-connect/run}): starts an embedded PostgreSQL 17 with two tables, a KRaft broker and
 * a distributed Connect worker from Kafka's jars ({@link LocalKafka}) with the built plugin
 * directory on its {@code plugin.path}, creates the connector through {@code POST /connectors},
 * waits for the snapshot's records, writes inserts, updates and deletes, prints each record as it
 * arrives and checks them against what was written ({@link Shop}). Then it stops everything and
 * deletes its directories, or, with {@code --keep-running}, keeps printing records until
 * interrupted. Records go to stdout, narration to stderr.
 *
 * <p>Exit status: 0 when every expected record arrived and no other, 1 when not (the message says
 * which), 2 for a bad argument.
 */
public final class QuickStart {

  static final String CONNECTOR_CLASS = "io.datum.cdc.kafka.connect.DatumPostgresConnector";
  static final String CONNECTOR = "shop";

  /** How long the records of each step (snapshot, changes) may take to arrive. */
  static final Duration RECORDS_TIMEOUT = Duration.ofSeconds(60);

  private final PrintStream out;
  private final PrintStream err;
  private final boolean full;
  private final Object lock = new Object();
  private volatile boolean stopping;
  private TopicReader reader;
  private LocalKafka kafka;
  private EmbeddedPostgresServer pg;
  private Path directory;
  private Path deleted;
  private boolean passed;
  private final Instant started = Instant.now();
  private final CountDownLatch finished = new CountDownLatch(1);

  /**
   * @param out where records go
   * @param err where narration goes
   * @param full whether records are printed whole rather than op, key and row
   */
  QuickStart(PrintStream out, PrintStream err, boolean full) {
    this.out = out;
    this.err = err;
    this.full = full;
  }

  /**
   * Runs the quick start; see the class comment.
   *
   * @param args {@code --keep-running}, {@code --full}, {@code --help}
   */
  public static void main(String[] args) {
    // this JVM's own Kafka clients (the consumer, an admin client) log through slf4j-simple: only
    // their errors, the broker's and the worker's logs are in their files
    System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
    System.setProperty("org.slf4j.simpleLogger.log.org.apache.kafka", "error");
    boolean keepRunning = false;
    boolean full = false;
    for (String arg : args) {
      switch (arg) {
        case "--keep-running" -> keepRunning = true;
        case "--full" -> full = true;
        case "--help", "-h" -> {
          System.out.println(USAGE);
          return;
        }
        default -> {
          System.err.println("unknown argument " + arg + "\n" + USAGE);
          System.exit(2);
        }
      }
    }
    QuickStart run = new QuickStart(System.out, System.err, full);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  run.interrupt();
                  try {
                    run.finished.await(LocalKafka.STOP_TIMEOUT.toSeconds() * 2, TimeUnit.SECONDS);
                  } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                  }
                },
                "quick-start-stop"));
    int status;
    try {
      run.run(keepRunning);
      status = run.passed() ? 0 : 1;
      run.say(run.passed() ? "OK (exit 0)" : "FAILED: the records differ, see above (exit 1)");
    } catch (Exception e) {
      if (run.stopping) {
        return; // interrupted (Ctrl-C): cleaned up, the JVM is exiting
      }
      System.err.println("kafka-connect quick start: FAILED: " + e.getMessage());
      if (!(e instanceof IllegalStateException)) {
        e.printStackTrace(); // not one of the run's own messages: where it came from
      }
      status = 1;
    }
    if (!run.stopping) {
      System.exit(status);
    }
  }

  static final String USAGE =
      """
      usage: samples/kafka-connect/run [--keep-running] [--full]
        Starts an embedded PostgreSQL, a KRaft broker and a distributed Kafka Connect worker (Kafka's
        own jars, separate processes, free ports), creates datum-cdc's connector from the built
        plugin through the worker's REST API, writes changes and prints their records.
        --keep-running  after the check, keep everything running and print new records until Ctrl-C
        --full          print each record's whole value (source, transaction, ...), not op and row""";

  /**
   * Starts everything, writes the changes, reads their records and {@linkplain #check checks} them,
   * and returns them, in arrival order; stops everything before it returns (with {@code
   * keepRunning}, once interrupted) and deletes the run's directory, unless the run failed: then
   * the broker's and the worker's configurations and logs are kept, and named.
   *
   * @param keepRunning whether to keep printing records until {@link #interrupt()}
   * @return the records of the snapshot and the changes; {@link #passed()} says whether they are
   *     the expected ones
   * @throws IllegalStateException if a part does not start, the connector fails, or the records do
   *     not arrive within {@link #RECORDS_TIMEOUT}; the message names the log to read
   * @throws Exception if a step fails otherwise
   */
  List<ChangeRecord> run(boolean keepRunning) throws Exception {
    Settings settings = Settings.load();
    try {
      directory = Files.createTempDirectory("datum-cdc-kafka-connect-");
      say("starting an embedded PostgreSQL 17 (wal_level=logical)...");
      synchronized (lock) {
        checkNotStopping();
        pg = EmbeddedPostgresServer.builder().start();
        kafka = new LocalKafka(settings.kafkaLibs(), directory);
      }
      Shop.createSchema(pg);
      say("PostgreSQL at " + pg.jdbcUrl() + ": tables customers (2 rows), orders (1 row)");
      say(
          "starting a KRaft broker (broker and controller in one process, kafka.Kafka) at "
              + kafka.bootstrapServers()
              + "...");
      long broker = kafka.startBroker();
      say("the broker runs: pid " + broker + ", log " + directory.resolve("broker/broker.log"));
      say(
          "starting a distributed Connect worker (ConnectDistributed) at "
              + kafka.restUrl()
              + ", plugin.path="
              + settings.pluginDirectory()
              + "...");
      ConnectRest rest = new ConnectRest(kafka.restUrl());
      long worker = kafka.startWorker(settings.pluginDirectory(), CONNECTOR_CLASS, rest);
      say(
          "the worker runs: pid "
              + worker
              + ", log "
              + workerLog()
              + "; it loaded "
              + CONNECTOR_CLASS
              + " from the plugin directory");
      say("POST " + kafka.restUrl() + "/connectors");
      err.println(rest.createConnector(CONNECTOR, connectorConfig()));
      synchronized (lock) {
        checkNotStopping();
        reader = new TopicReader(kafka.bootstrapServers(), Shop.PREFIX);
      }
      List<ChangeRecord> records = new ArrayList<>();
      read(rest, records, Shop.expectedSnapshot().size(), "the initial snapshot's");
      say("the snapshot's records arrived; writing changes:");
      for (String transaction : Shop.CHANGES) {
        err.println("  " + transaction);
      }
      Shop.writeChanges(pg);
      read(
          rest,
          records,
          Shop.expectedSnapshot().size() + Shop.expectedChanges().size(),
          "the changes'");
      say("all " + records.size() + " records arrived");
      passed = check(records);
      say(tryNext(keepRunning));
      if (keepRunning) {
        while (!stopping) {
          print(reader.poll(Duration.ofSeconds(1)), null);
        }
      }
      return records;
    } catch (WakeupException e) {
      throw new IllegalStateException("interrupted", e);
    } finally {
      try {
        cleanUp();
      } finally {
        finished.countDown();
      }
    }
  }

  /**
   * Compares the records with what was written, per topic, and says the result on stderr.
   *
   * @param records the records {@link #run} returned
   * @return whether they are exactly the expected ones
   */
  boolean check(List<ChangeRecord> records) {
    List<ChangeRecord> expected = new ArrayList<>(Shop.expectedSnapshot());
    expected.addAll(Shop.expectedChanges());
    Map<String, List<ChangeRecord>> want = byTopic(expected);
    Map<String, List<ChangeRecord>> got = byTopic(records);
    if (want.equals(got)) {
      say(
          "OK: "
              + records.size()
              + " records in "
              + got.keySet()
              + ", each topic's in the order written: the snapshot's reads, then inserts, updates,"
              + " deletes and their tombstones");
      return true;
    }
    say("FAILED: the records differ from what was written.\n  expected " + want + "\n  got " + got);
    return false;
  }

  /** Returns whether {@link #run} found exactly the expected records; false before it did. */
  boolean passed() {
    return passed;
  }

  /** Returns the run's directory once {@link #run} deleted it; null before. */
  Path deletedDirectory() {
    return deleted;
  }

  /** Stops a run in progress (from a shutdown hook): it cleans up and returns. Any thread. */
  void interrupt() {
    LocalKafka started;
    synchronized (lock) {
      stopping = true;
      if (reader != null) {
        reader.wakeup();
      }
      started = kafka;
    }
    if (started != null) {
      started.close(); // a start in progress fails at once rather than after its timeout
    }
  }

  static Map<String, List<ChangeRecord>> byTopic(List<ChangeRecord> records) {
    Map<String, List<ChangeRecord>> m = new TreeMap<>();
    for (ChangeRecord r : records) {
      m.computeIfAbsent(r.topic(), t -> new ArrayList<>()).add(r);
    }
    return m;
  }

  private Map<String, String> connectorConfig() {
    Map<String, String> c = new LinkedHashMap<>();
    c.put("connector.class", CONNECTOR_CLASS);
    c.put("tasks.max", "1");
    c.put("database.hostname", "localhost");
    c.put("database.port", Integer.toString(pg.port()));
    // the embedded server trusts local connections: no database.password
    c.put("database.user", pg.user());
    c.put("database.dbname", EmbeddedPostgresServer.DEFAULT_DATABASE);
    c.put("topic.prefix", Shop.PREFIX);
    c.put("slot.name", "shop_cdc");
    c.put("publication.name", "shop_cdc");
    c.put("publication.autocreate.mode", "filtered");
    c.put("table.include.list", "public.customers,public.orders");
    c.put("snapshot.mode", "initial");
    c.put("exactly.once.support", "required");
    c.put("transaction.boundary", "connector");
    return c;
  }

  /** Reads and prints records until {@code total} arrived; fails if the connector fails. */
  private void read(ConnectRest rest, List<ChangeRecord> records, int total, String what) {
    Instant deadline = Instant.now().plus(RECORDS_TIMEOUT);
    while (records.size() < total) {
      print(reader.poll(Duration.ofMillis(500)), records);
      String state = rest.state(CONNECTOR);
      if (state.startsWith("FAILED")) {
        throw new IllegalStateException(
            "the connector failed: " + state + "\n(worker log: " + workerLog() + ")");
      }
      if (records.size() < total && Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            what
                + " records did not arrive within "
                + RECORDS_TIMEOUT.toSeconds()
                + " s: "
                + records.size()
                + " of "
                + total
                + " records, connector "
                + state
                + "; "
                + LocalKafka.tail(workerLog()));
      }
    }
  }

  private void print(List<ConsumerRecord<byte[], byte[]>> polled, List<ChangeRecord> into) {
    for (ConsumerRecord<byte[], byte[]> r : polled) {
      out.println(ChangeRecord.describe(r, full));
      if (into != null) {
        into.add(ChangeRecord.of(r));
      }
    }
    out.flush();
  }

  private String tryNext(boolean keepRunning) {
    return String.join(
        "\n  ",
        keepRunning
            ? "running until Ctrl-C; new records are printed as they arrive."
            : "stopping now; samples/kafka-connect/run --keep-running keeps all this running:",
        "PostgreSQL: " + pg.jdbcUrl() + " (no password), write to customers or orders",
        "Kafka: bootstrap.servers="
            + kafka.bootstrapServers()
            + ", topics "
            + Shop.CUSTOMERS
            + ", "
            + Shop.ORDERS,
        "Connect REST: "
            + kafka.restUrl()
            + "  (curl "
            + kafka.restUrl()
            + "/connectors/"
            + CONNECTOR
            + "/status; POST your own config to "
            + kafka.restUrl()
            + "/connectors)",
        "configs and logs: "
            + kafka.directory()
            + "/{broker,worker} (server.properties, connect-distributed.properties, *.log;"
            + " deleted on exit unless the run fails)");
  }

  private Path workerLog() {
    return directory.resolve("worker").resolve("worker.log");
  }

  private void checkNotStopping() {
    if (stopping) {
      throw new IllegalStateException("interrupted");
    }
  }

  private void cleanUp() {
    synchronized (lock) {
      RuntimeException failure = null;
      for (AutoCloseable c : new AutoCloseable[] {reader, kafka, pg}) {
        try {
          if (c != null) {
            c.close();
          }
        } catch (Exception e) {
          if (failure == null) {
            failure = new IllegalStateException("stopping failed", e);
          } else {
            failure.addSuppressed(e);
          }
        }
      }
      reader = null;
      kafka = null;
      pg = null;
      if (directory != null && (passed || stopping)) {
        deleteTree(directory);
        deleted = directory;
        say("stopped the worker, the broker and PostgreSQL; deleted " + directory);
      } else if (directory != null) {
        // a failed run keeps what tells why
        say(
            "stopped the worker, the broker and PostgreSQL; kept "
                + directory
                + " (their configurations and logs) to look at: rm -r it when done");
      }
      directory = null;
      if (failure != null) {
        throw failure;
      }
    }
  }

  private void say(String line) {
    err.printf(
        "kafka-connect quick start [%5.1f s]: %s%n",
        Duration.between(started, Instant.now()).toMillis() / 1000.0, line);
    err.flush();
  }

  private static void deleteTree(Path root) {
    try (Stream<Path> s = Files.walk(root)) {
      for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot delete " + root, e);
    }
  }

  /**
   * Where the build put what the run starts (sample.properties, filled in by the build).
   *
   * @param pluginDirectory the unpacked plugin, a directory for {@code plugin.path}
   * @param kafkaLibs Kafka's jars
   */
  record Settings(Path pluginDirectory, Path kafkaLibs) {

    static Settings load() throws IOException {
      Properties p = new Properties();
      try (InputStream in = QuickStart.class.getResourceAsStream("sample.properties")) {
        p.load(in);
      }
      Settings s =
          new Settings(
              Path.of(p.getProperty("plugin.directory")).normalize(),
              Path.of(p.getProperty("kafka.libs")).normalize());
      for (Path dir :
          List.of(s.pluginDirectory().resolve("datum-cdc-kafka-connect"), s.kafkaLibs())) {
        if (!Files.isDirectory(dir)) {
          throw new IllegalStateException(
              dir
                  + " does not exist: build it with ./mvnw -pl samples/kafka-connect -am package"
                  + " -DskipTests (samples/kafka-connect/run does)");
        }
      }
      return s;
    }
  }
}
