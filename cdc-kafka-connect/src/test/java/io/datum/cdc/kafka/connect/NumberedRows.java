package io.datum.cdc.kafka.connect;

import com.fasterxml.jackson.databind.JsonNode;
import io.datum.cdc.embedded.EmbeddedPostgresServer;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedConnectCluster;
import org.awaitility.Awaitility;

/**
 * Writes numbered rows into a table from a thread, in transactions of 1 to 10 rows, about 100 a
 * second, until stopped: the workload of the failure tests, whose topics must then hold every
 * number.
 */
final class NumberedRows implements AutoCloseable {

  private final Thread thread;
  private final AtomicInteger written = new AtomicInteger();
  private final AtomicReference<Throwable> failure = new AtomicReference<>();
  private volatile boolean stop;

  /**
   * Starts writing into {@code table} (a table {@code (id int PRIMARY KEY)}).
   *
   * @param pg the server
   * @param table the table's name
   */
  NumberedRows(EmbeddedPostgresServer pg, String table) {
    thread =
        new Thread(
            () -> {
              try (Connection c =
                      DriverManager.getConnection(pg.jdbcUrl(), pg.user(), pg.password());
                  PreparedStatement insert =
                      c.prepareStatement(
                          "INSERT INTO " + table + " SELECT g FROM generate_series(?, ?) g")) {
                int next = 1;
                int round = 0;
                while (!stop) {
                  int size = 1 + (round++ * 7) % 10;
                  insert.setInt(1, next);
                  insert.setInt(2, next + size - 1);
                  insert.executeUpdate();
                  next += size;
                  written.set(next - 1);
                  // a steady, bounded rate (about 500 rows/s), so the topics stay small enough to
                  // read whole: pacing, not synchronisation
                  java.util.concurrent.locks.LockSupport.parkNanos(10_000_000L);
                }
              } catch (SQLException | RuntimeException e) {
                failure.set(e);
              }
            },
            "numbered-rows-" + table);
    thread.setDaemon(true);
    thread.start();
  }

  /** Returns how many rows are committed so far (numbers 1 to this). */
  int written() {
    return written.get();
  }

  /**
   * Stops writing and returns the number of rows written.
   *
   * @throws IllegalStateException if the writer failed
   */
  int stop() throws InterruptedException {
    stop = true;
    thread.join();
    if (failure.get() != null) {
      throw new IllegalStateException("the writer failed", failure.get());
    }
    return written.get();
  }

  @Override
  public void close() throws InterruptedException {
    stop = true;
    thread.join();
  }

  /**
   * Reads the topic (partition 0) from the beginning until it holds every number from 1 to {@code
   * total} and the consumer reached the partition's end (the last stable offset for a {@code
   * read_committed} consumer), and returns how often each number is in it.
   *
   * @param consumerProps extra consumer properties (isolation.level)
   * @throws AssertionError naming the first missing numbers if they do not all come within 3
   *     minutes
   */
  static Map<Integer, Integer> awaitAll(
      EmbeddedConnectCluster connect, String topic, int total, Map<String, Object> consumerProps) {
    Map<Integer, Integer> seen = new HashMap<>();
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer =
        connect.kafka().createConsumer(new HashMap<>(consumerProps))) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      try {
        Awaitility.await()
            .atMost(Duration.ofSeconds(180))
            .pollDelay(Duration.ZERO)
            .pollInterval(Duration.ofMillis(10))
            .until(
                () -> {
                  for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(500))) {
                    if (r.value() != null) {
                      JsonNode v = ConnectClusters.parse(r.value());
                      if ("c".equals(v.get("op").asText())) {
                        seen.merge(v.get("after").get("id").asInt(), 1, Integer::sum);
                      }
                    }
                  }
                  return seen.size() >= total
                      && consumer.position(tp) >= consumer.endOffsets(List.of(tp)).get(tp);
                });
      } catch (org.awaitility.core.ConditionTimeoutException e) {
        List<Integer> missing = new ArrayList<>();
        for (int id = 1; id <= total && missing.size() < 30; id++) {
          if (!seen.containsKey(id)) {
            missing.add(id);
          }
        }
        throw new AssertionError(
            topic
                + " holds "
                + seen.size()
                + " of the numbers 1.."
                + total
                + "; missing "
                + missing,
            e);
      }
    }
    return seen;
  }

  /** Counts each row's number in change event values (tombstones and non-inserts ignored). */
  static Map<Integer, Integer> count(List<JsonNode> values) {
    Map<Integer, Integer> seen = new HashMap<>();
    for (JsonNode v : values) {
      if (v != null && "c".equals(v.get("op").asText())) {
        seen.merge(v.get("after").get("id").asInt(), 1, Integer::sum);
      }
    }
    return seen;
  }
}
