package io.datum.cdc.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;

/** Builds the in-JVM Kafka Connect clusters of the tests, and reads their topics. */
final class ConnectClusters {

  static final ObjectMapper JSON = new ObjectMapper();

  /** The cluster of {@link #shared()}; null until it is first asked for. */
  private static EmbeddedConnectCluster shared;

  private ConnectClusters() {}

  /**
   * Returns the one-worker cluster (not exactly-once) that the test classes which neither stop a
   * worker nor need exactly-once share ({@code ConnectStreamingTest}, {@code ConnectSnapshotTest}):
   * started by the first class that asks and never stopped (it ends with the test JVM); a cluster
   * start and stop cost about 5 s. Each class uses connectors, slots and topic prefixes of its own
   * names and {@linkplain #release releases} the cluster when it is done.
   *
   * @return the running cluster; never null
   */
  static synchronized EmbeddedConnectCluster shared() {
    if (shared == null) {
      shared = start("shared", 1, false);
    }
    return shared;
  }

  /**
   * Deletes every connector of a {@link #shared()} cluster, so that the next class finds it idle.
   *
   * @param cluster the shared cluster, or null if the class never got it
   */
  static void release(EmbeddedConnectCluster cluster) {
    if (cluster != null) {
      for (String connector : cluster.connectors()) {
        cluster.deleteConnector(connector);
      }
    }
  }

  /**
   * Returns a started cluster with one KRaft broker (transaction logs of replication factor 1, so
   * exactly-once works on one broker) and {@code workers} distributed workers that write JSON
   * without schemas and commit offsets every second.
   *
   * @param name the cluster's name
   * @param workers how many workers
   * @param exactlyOnce whether the workers run with {@code exactly.once.source.support=enabled},
   *     and abandon their tasks when they stop
   */
  static EmbeddedConnectCluster start(String name, int workers, boolean exactlyOnce) {
    Map<String, String> worker = new HashMap<>();
    worker.put("key.converter", JsonConverter.class.getName());
    worker.put("value.converter", JsonConverter.class.getName());
    worker.put("key.converter.schemas.enable", "false");
    worker.put("value.converter.schemas.enable", "false");
    worker.put("offset.flush.interval.ms", "1000");
    // a task that moves is rebalanced at once rather than after the default 5 minutes
    worker.put("scheduled.rebalance.max.delay.ms", "0");
    if (exactlyOnce) {
      worker.put("exactly.once.source.support", "enabled");
      // a stopping worker abandons its tasks after 1 ms, their producers closed at once with a
      // Kafka transaction open: what a killed worker leaves behind
      worker.put("task.shutdown.graceful.timeout.ms", "1");
      // such a transaction stays open until the broker times it out (or a new producer of the
      // task fences it): 10 s rather than the producer's default 60 s
      worker.put("producer.transaction.timeout.ms", "10000");
    }
    Properties broker = new Properties();
    broker.put("transaction.state.log.replication.factor", "1");
    broker.put("transaction.state.log.min.isr", "1");
    broker.put("auto.create.topics.enable", "true");
    broker.put("transaction.abort.timed.out.transaction.cleanup.interval.ms", "1000");
    EmbeddedConnectCluster cluster =
        new EmbeddedConnectCluster.Builder()
            .name(name)
            .numWorkers(workers)
            .workerProps(worker)
            .brokerProps(broker)
            .numBrokers(1)
            .build();
    cluster.start();
    return cluster;
  }

  /** Returns a connector configuration streaming the server's database with a slot. */
  static Map<String, String> connector(EmbeddedPostgresServer pg, String prefix, String slot) {
    Map<String, String> c = new HashMap<>();
    c.put("name", prefix);
    c.put("connector.class", DatumPostgresConnector.class.getName());
    c.put("tasks.max", "1");
    c.put("database.hostname", "localhost");
    c.put("database.port", Integer.toString(pg.port()));
    c.put("database.user", pg.user());
    c.put("database.password", pg.password());
    c.put("database.dbname", "postgres");
    c.put("topic.prefix", prefix);
    c.put("slot.name", slot);
    c.put("snapshot.mode", "never");
    return c;
  }

  /** Reads values as JSON (null for a tombstone), in topic-partition order. */
  static List<JsonNode> values(ConsumerRecords<byte[], byte[]> records) {
    List<JsonNode> out = new ArrayList<>();
    for (ConsumerRecord<byte[], byte[]> r : records) {
      out.add(r.value() == null ? null : parse(r.value()));
    }
    return out;
  }

  static JsonNode parse(byte[] json) {
    try {
      return JSON.readTree(new String(json, StandardCharsets.UTF_8));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
