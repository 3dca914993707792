package io.datum.cdc.core.large;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.InsertEvent;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A consumer run in its own JVM by {@link LargeTransactionTest} (with a small {@code -Xmx}):
 * streams one slot until {@code expected} inserts arrived, acknowledging each event with the
 * default per-event durability (the checkpoint of the partly acknowledged transaction is stored on
 * every call, so this also shows that costs no more than its ranges), records each id, and prints
 * {@code distinct=N duplicates=N eventCount=N spilled=N maxHeapUsed=N} on stdout.
 *
 * <p>Arguments: JDBC URL, slot and publication name, expected row count, memory budget in bytes,
 * spill directory.
 */
public final class LargeTransactionConsumer {

  private LargeTransactionConsumer() {}

  /**
   * @param args see the class comment
   * @throws Exception if streaming fails or times out
   */
  public static void main(String[] args) throws Exception {
    String url = args[0];
    String name = args[1];
    int expected = Integer.parseInt(args[2]);
    BitSet seen = new BitSet(expected + 1);
    AtomicLong duplicates = new AtomicLong();
    AtomicLong eventCount = new AtomicLong();
    AtomicLong maxUsed = new AtomicLong();
    CountDownLatch done = new CountDownLatch(expected);
    Runtime rt = Runtime.getRuntime();
    try (MemoryCheckpointStore store = new MemoryCheckpointStore();
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(url)
                .slot(name)
                .publication(name)
                .checkpointStore(store)
                .memoryBudget(Long.parseLong(args[3]))
                .spillDirectory(Path.of(args[4]))
                .build()) {
      source.start(
          (event, checkpoints) -> {
            int id = (Integer) ((InsertEvent) event).after().get("id");
            if (seen.get(id)) {
              duplicates.incrementAndGet();
            }
            seen.set(id);
            eventCount.set(event.offset().eventCount());
            if ((id & 0xFFFF) == 0) {
              maxUsed.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max);
            }
            checkpoints.acknowledge(event.offset()); // per event, durable (the default)
            done.countDown();
          });
      if (!done.await(20, TimeUnit.MINUTES)) {
        throw new IllegalStateException(
            "only " + seen.cardinality() + " of " + expected + " rows arrived");
      }
      System.out.printf(
          "distinct=%d duplicates=%d eventCount=%d spilled=%d maxHeapUsed=%d%n",
          seen.cardinality(),
          duplicates.get(),
          eventCount.get(),
          source.metrics().transactionsSpilled(),
          maxUsed.get());
    }
  }
}
