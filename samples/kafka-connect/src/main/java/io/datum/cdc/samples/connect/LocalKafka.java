package io.datum.cdc.samples.connect;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.common.Uuid;

/**
 * A one-node Kafka on this machine, started from Kafka's own jars as a user's {@code bin/} scripts
 * start it: {@code kafka.tools.StorageTool format} ({@code kafka-storage.sh}), then {@code
 * kafka.Kafka} ({@code kafka-server-start.sh}) as a KRaft node that is broker and controller, then
 * {@code org.apache.kafka.connect.cli.ConnectDistributed} ({@code connect-distributed.sh}) as one
 * distributed Connect worker with exactly-once source support. Each is a JVM of its own, with a
 * class path of Kafka's jars only ({@code kafka.libs}), its configuration file and its log in a
 * directory of its own under the run's directory. Ports are free ports of this machine, chosen at
 * start.
 */
final class LocalKafka implements AutoCloseable {

  /** How long a broker or worker is given to start, and to stop before it is killed. */
  static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

  private final Path kafkaLibs;
  private final Path directory;
  private final int brokerPort;
  private final int controllerPort;
  private final int restPort;
  private final List<Process> processes = new ArrayList<>();
  private boolean closed;

  /**
   * Chooses the ports; starts nothing.
   *
   * @param kafkaLibs the directory of Kafka's jars (a Kafka installation's {@code libs/})
   * @param directory an empty directory for the configurations, the data and the logs
   * @throws UncheckedIOException if no free port can be found
   */
  LocalKafka(Path kafkaLibs, Path directory) {
    this.kafkaLibs = kafkaLibs;
    this.directory = directory;
    this.brokerPort = freePort();
    this.controllerPort = freePort();
    this.restPort = freePort();
  }

  /** Returns the broker's {@code bootstrap.servers}, {@code localhost:PORT}. */
  String bootstrapServers() {
    return "localhost:" + brokerPort;
  }

  /** Returns the worker's REST URL, {@code http://localhost:PORT}, without a trailing slash. */
  String restUrl() {
    return "http://localhost:" + restPort;
  }

  /** Returns the directory of the configurations, data and logs. */
  Path directory() {
    return directory;
  }

  /**
   * Formats the KRaft log directory and starts the broker; returns once it answers an Admin
   * client's {@code describeCluster}.
   *
   * @return the broker's process id
   * @throws IllegalStateException if formatting fails or the broker exits or does not answer within
   *     {@link #START_TIMEOUT}; the message quotes the end of its log
   * @throws IOException if a file cannot be written
   * @throws InterruptedException if interrupted while waiting
   */
  long startBroker() throws IOException, InterruptedException {
    Path dir = Files.createDirectories(directory.resolve("broker"));
    Properties p = new Properties();
    p.put("process.roles", "broker,controller");
    p.put("node.id", "1");
    p.put("controller.quorum.voters", "1@localhost:" + controllerPort);
    p.put(
        "listeners",
        "PLAINTEXT://localhost:" + brokerPort + ",CONTROLLER://localhost:" + controllerPort);
    p.put("advertised.listeners", "PLAINTEXT://localhost:" + brokerPort);
    p.put("controller.listener.names", "CONTROLLER");
    p.put("inter.broker.listener.name", "PLAINTEXT");
    p.put("listener.security.protocol.map", "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    p.put("log.dirs", dir.resolve("data").toString());
    p.put("num.partitions", "1");
    // one broker: every internal topic with one replica (exactly-once needs the transaction log)
    p.put("offsets.topic.replication.factor", "1");
    p.put("transaction.state.log.replication.factor", "1");
    p.put("transaction.state.log.min.isr", "1");
    p.put("share.coordinator.state.topic.replication.factor", "1");
    p.put("share.coordinator.state.topic.min.isr", "1");
    p.put("group.initial.rebalance.delay.ms", "0");
    Path config = write(dir.resolve("server.properties"), p);
    Process format =
        java(
            List.of("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"),
            "kafka.tools.StorageTool",
            List.of("format", "-t", Uuid.randomUuid().toString(), "-c", config.toString()),
            dir.resolve("format.log"));
    if (!format.waitFor(START_TIMEOUT.toSeconds(), TimeUnit.SECONDS) || format.exitValue() != 0) {
      format.destroyForcibly();
      throw new IllegalStateException(
          "kafka-storage format failed: " + tail(dir.resolve("format.log")));
    }
    Process broker =
        java(
            List.of("-Xmx512m", "-XX:+UseSerialGC"),
            "kafka.Kafka",
            List.of(config.toString()),
            dir.resolve("broker.log"));
    Properties admin = new Properties();
    admin.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers());
    admin.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, "5000");
    admin.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, "2000");
    try (Admin client = Admin.create(admin)) {
      await(
          "the broker to answer on " + bootstrapServers(),
          broker,
          dir.resolve("broker.log"),
          () -> {
            try {
              return !client.describeCluster().nodes().get(5, TimeUnit.SECONDS).isEmpty();
            } catch (Exception notYet) {
              return false;
            }
          });
    }
    return broker.pid();
  }

  /**
   * Starts the Connect worker with {@code plugin.path} naming {@code pluginPath}; returns once its
   * REST API answers {@code GET /connector-plugins} (it does once it has loaded every plugin) with
   * the connector class among the plugins.
   *
   * @param pluginPath a directory of plugin directories (the built plugin, unpacked)
   * @param connectorClass the connector class the worker must have found there
   * @param rest the client that asks
   * @return the worker's process id
   * @throws IllegalStateException if the worker exits, or does not list the connector within {@link
   *     #START_TIMEOUT}; the message quotes the end of its log
   * @throws IOException if a file cannot be written
   * @throws InterruptedException if interrupted while waiting
   */
  long startWorker(Path pluginPath, String connectorClass, ConnectRest rest)
      throws IOException, InterruptedException {
    Path dir = Files.createDirectories(directory.resolve("worker"));
    Properties p = new Properties();
    p.put("bootstrap.servers", bootstrapServers());
    p.put("group.id", "datum-cdc-quick-start");
    p.put("listeners", restUrl());
    p.put("plugin.path", pluginPath.toString());
    // plugins found by their ServiceLoader manifests, as Kafka recommends once every plugin has
    // them (the connector's jar has): the default, hybrid_warn, also scans every class of the
    // class path and the plugin path, 15 s more on a 2-core machine
    p.put("plugin.discovery", "service_load");
    p.put("key.converter", "org.apache.kafka.connect.json.JsonConverter");
    p.put("value.converter", "org.apache.kafka.connect.json.JsonConverter");
    // records without the schema beside each value: what this sample prints, readable
    p.put("key.converter.schemas.enable", "false");
    p.put("value.converter.schemas.enable", "false");
    p.put("config.storage.topic", "connect-configs");
    p.put("offset.storage.topic", "connect-offsets");
    p.put("status.storage.topic", "connect-status");
    p.put("config.storage.replication.factor", "1");
    p.put("offset.storage.replication.factor", "1");
    p.put("status.storage.replication.factor", "1");
    p.put("offset.flush.interval.ms", "1000");
    // KIP-618, as docs/kafka-connect.md's worker
    p.put("exactly.once.source.support", "enabled");
    p.put("config.providers", "file");
    p.put(
        "config.providers.file.class",
        "org.apache.kafka.common.config.provider.FileConfigProvider");
    Path config = write(dir.resolve("connect-distributed.properties"), p);
    Process worker =
        java(
            List.of("-Xmx512m", "-XX:+UseSerialGC"),
            "org.apache.kafka.connect.cli.ConnectDistributed",
            List.of(config.toString()),
            dir.resolve("worker.log"));
    List<Set<String>> plugins = new ArrayList<>(1);
    await(
        "the Connect worker to answer " + restUrl() + "/connector-plugins",
        worker,
        dir.resolve("worker.log"),
        () -> {
          rest.plugins().ifPresent(plugins::add);
          return !plugins.isEmpty();
        });
    // the worker answers once it has loaded every plugin: a connector missing now is missing
    if (!plugins.get(0).contains(connectorClass)) {
      throw new IllegalStateException(
          "the Connect worker did not find "
              + connectorClass
              + " on its plugin.path "
              + pluginPath
              + " (the connectors it found: "
              + new TreeSet<>(plugins.get(0))
              + "): is the plugin built whole? Its log: "
              + dir.resolve("worker.log"));
    }
    return worker.pid();
  }

  /**
   * Stops the worker, then the broker (SIGTERM, their shutdown hooks run; killed after {@link
   * #STOP_TIMEOUT}), and waits until they have exited; a start in progress then fails. Any thread;
   * a second call does nothing.
   */
  @Override
  public synchronized void close() {
    closed = true;
    for (int i = processes.size() - 1; i >= 0; i--) {
      Process process = processes.get(i);
      process.destroy();
      try {
        if (!process.waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
          process.destroyForcibly().waitFor(STOP_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        }
      } catch (InterruptedException e) {
        process.destroyForcibly();
        Thread.currentThread().interrupt();
      }
    }
    processes.clear();
  }

  private synchronized Process java(
      List<String> jvmOptions, String mainClass, List<String> args, Path log) throws IOException {
    if (closed) {
      throw new IllegalStateException("stopped before " + mainClass + " started");
    }
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvmOptions);
    command.add("-cp");
    command.add(kafkaLibs.resolve("*").toString());
    // the SLF4J binding Kafka's jars come with here (slf4j-simple): info to the log file
    command.add("-Dorg.slf4j.simpleLogger.showDateTime=true");
    command.add(mainClass);
    command.addAll(args);
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().keySet().removeIf(k -> k.startsWith("KAFKA_"));
    Process process = builder.start();
    processes.add(process);
    return process;
  }

  private static void await(String what, Process process, Path log, BooleanSupplier condition)
      throws InterruptedException {
    Instant deadline = Instant.now().plus(START_TIMEOUT);
    while (!condition.getAsBoolean()) {
      if (!process.isAlive()) {
        throw new IllegalStateException(
            "waiting for "
                + what
                + ": the process exited ("
                + process.exitValue()
                + "); "
                + tail(log));
      }
      if (Instant.now().isAfter(deadline)) {
        throw new IllegalStateException(
            "waiting for "
                + what
                + ": not after "
                + START_TIMEOUT.toSeconds()
                + " s; "
                + tail(log));
      }
      // a poll interval while a separate process starts; nothing of this JVM to wait on
      process.waitFor(200, TimeUnit.MILLISECONDS);
    }
  }

  /** Returns the log's last 20 lines, introduced by its path, for an error message. */
  static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log, StandardCharsets.UTF_8);
      return "the end of "
          + log
          + ":\n"
          + String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
    } catch (IOException e) {
      return "its log " + log + " cannot be read: " + e;
    }
  }

  private static Path write(Path file, Properties p) throws IOException {
    StringBuilder s = new StringBuilder();
    for (Map.Entry<Object, Object> e : new TreeMap<>(p).entrySet()) {
      s.append(e.getKey()).append('=').append(e.getValue()).append('\n');
    }
    return Files.writeString(file, s.toString(), StandardCharsets.UTF_8);
  }

  private static int freePort() {
    try (ServerSocket socket = new ServerSocket(0)) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException("no free port on this machine", e);
    }
  }
}
