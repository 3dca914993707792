package io.datum.cdc.samples.connect;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.locks.LockSupport;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Reads every topic whose name starts with {@code <topic.prefix>.} from its beginning, the topics
 * the connector creates included: a consumer without a group ({@code assign}) that looks for new
 * topics at each {@link #poll}, reading committed records only ({@code read_committed}, as a
 * consumer of an exactly-once connector must).
 */
final class TopicReader implements AutoCloseable {

  private final KafkaConsumer<byte[], byte[]> consumer;
  private final String prefix;
  private final Set<TopicPartition> assigned = new HashSet<>();

  /**
   * @param bootstrapServers the broker
   * @param topicPrefix the connector's {@code topic.prefix}
   */
  TopicReader(String bootstrapServers, String topicPrefix) {
    Properties p = new Properties();
    p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrapServers);
    p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
    p.put(ConsumerConfig.ALLOW_AUTO_CREATE_TOPICS_CONFIG, "false");
    p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
    this.consumer =
        new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer());
    this.prefix = topicPrefix + ".";
  }

  /**
   * Assigns the topics of the prefix that appeared since the last call, from their beginning, then
   * polls once.
   *
   * @param timeout how long the poll waits for records
   * @return the records, in each partition's order; empty if none came within the timeout
   * @throws org.apache.kafka.common.errors.WakeupException if {@link #wakeup} was called
   */
  List<ConsumerRecord<byte[], byte[]>> poll(Duration timeout) {
    Set<TopicPartition> found = new HashSet<>();
    for (List<PartitionInfo> partitions : consumer.listTopics(timeout).values()) {
      for (PartitionInfo p : partitions) {
        if (p.topic().startsWith(prefix)) {
          found.add(new TopicPartition(p.topic(), p.partition()));
        }
      }
    }
    if (!assigned.containsAll(found)) {
      Set<TopicPartition> added = new HashSet<>(found);
      added.removeAll(assigned);
      assigned.addAll(found);
      consumer.assign(assigned);
      consumer.seekToBeginning(added);
    }
    List<ConsumerRecord<byte[], byte[]>> records = new ArrayList<>();
    if (assigned.isEmpty()) {
      // no topic yet: the connector has written nothing; ask again after the timeout
      LockSupport.parkNanos(timeout.toNanos());
    } else {
      consumer.poll(timeout).forEach(records::add);
    }
    return records;
  }

  /**
   * Makes a {@link #poll} in progress, or the next one, throw {@code WakeupException}; any thread.
   */
  void wakeup() {
    consumer.wakeup();
  }

  @Override
  public void close() {
    consumer.close(Duration.ofSeconds(5));
  }
}
