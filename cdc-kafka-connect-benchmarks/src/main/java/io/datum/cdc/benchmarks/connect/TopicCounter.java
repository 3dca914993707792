package io.datum.cdc.benchmarks.connect;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.util.clusters.EmbeddedKafkaCluster;

/**
 * A consumer thread counting the change records (non-null values) of a one-partition topic from its
 * beginning, as bytes (nothing deserialized), until it has seen the expected number.
 */
final class TopicCounter extends Thread {
  private final EmbeddedKafkaCluster kafka;
  private final String topic;
  private final boolean readCommitted;
  private final long expected;
  private final CountDownLatch assigned = new CountDownLatch(1);
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile boolean running = true;
  private volatile long count;
  private volatile long firstNanos;
  private volatile long lastNanos;
  private volatile long endOffset = -1;
  private volatile Throwable failure;

  TopicCounter(
      EmbeddedKafkaCluster kafka,
      String topic,
      boolean readCommitted,
      long expected,
      String threadName) {
    super(threadName);
    setDaemon(true);
    this.kafka = kafka;
    this.topic = topic;
    this.readCommitted = readCommitted;
    this.expected = expected;
  }

  @Override
  public void run() {
    Map<String, Object> props = new HashMap<>();
    props.put("isolation.level", readCommitted ? "read_committed" : "read_uncommitted");
    props.put("max.poll.records", "10000");
    props.put("fetch.max.bytes", Integer.toString(64 << 20));
    props.put("max.partition.fetch.bytes", Integer.toString(64 << 20));
    TopicPartition tp = new TopicPartition(topic, 0);
    try (KafkaConsumer<byte[], byte[]> consumer = kafka.createConsumer(props)) {
      consumer.assign(List.of(tp));
      consumer.seekToBeginning(List.of(tp));
      consumer.position(tp);
      assigned.countDown();
      long n = 0;
      while (running && n < expected) {
        for (ConsumerRecord<byte[], byte[]> r : consumer.poll(Duration.ofMillis(100))) {
          if (r.value() != null) {
            if (n == 0) {
              firstNanos = System.nanoTime();
            }
            n++;
          }
        }
        count = n;
      }
      if (n >= expected) {
        lastNanos = System.nanoTime();
      }
      done.countDown();
      endOffset = consumer.endOffsets(List.of(tp)).get(tp);
    } catch (Throwable t) {
      failure = t;
    } finally {
      assigned.countDown();
      done.countDown();
    }
  }

  /** Waits until the consumer is positioned at the topic's beginning. */
  void awaitAssigned() throws InterruptedException {
    assigned.await();
    if (failure != null) {
      throw new IllegalStateException("the consumer of " + topic + " failed", failure);
    }
  }

  /**
   * Waits until the consumer has seen every change, the timeout passes, or {@code failed} names a
   * failure (asked every second).
   *
   * @return whether every change was seen
   */
  boolean awaitDone(long timeoutSeconds, Supplier<String> failed) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
    while (System.nanoTime() < deadline) {
      if (done.await(1, TimeUnit.SECONDS)) {
        return count >= expected;
      }
      if (failed.get() != null) {
        return false;
      }
    }
    return false;
  }

  /** Stops consuming and waits for the thread to end. */
  void stopAndJoin() throws InterruptedException {
    running = false;
    join(30_000);
  }

  long count() {
    return count;
  }

  long firstNanos() {
    return firstNanos;
  }

  long lastNanos() {
    return lastNanos;
  }

  /** The partition's end offset after the last change was seen (data and transaction markers). */
  long endOffset() {
    return endOffset;
  }
}
