package io.datum.cdc.core.large;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.event.ReadEvent;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A consumer run in its own JVM by {@link LargeSnapshotTest} (with a small {@code -Xmx}): creates
 * the slot and runs {@code snapshot(INITIAL_ONLY)} over one table, acknowledging each read row with
 * the default per-event durability, records each id, and once the source completed prints {@code
 * distinct=N duplicates=N other=N rowsRead=N maxHeapUsed=N maxLiveAfterGc=N peakHeap=N millis=N} on
 * stdout: the most heap in use sampled every 20 ms (garbage included), the most the heap pools held
 * right after a collection (the live data), and the sum of the heap pools' peak usage.
 *
 * <p>Arguments: JDBC URL, slot and publication name, expected row count, memory budget in bytes,
 * snapshot parallelism.
 */
public final class LargeSnapshotConsumer {

  private LargeSnapshotConsumer() {}

  /**
   * @param args see the class comment
   * @throws Exception if the snapshot fails or times out
   */
  public static void main(String[] args) throws Exception {
    String url = args[0];
    String name = args[1];
    int expected = Integer.parseInt(args[2]);
    BitSet seen = new BitSet(expected + 1);
    AtomicLong duplicates = new AtomicLong();
    AtomicLong other = new AtomicLong();
    AtomicLong maxUsed = new AtomicLong();
    Runtime rt = Runtime.getRuntime();
    Thread sampler =
        new Thread(
            () -> {
              while (!Thread.currentThread().isInterrupted()) {
                maxUsed.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max);
                try {
                  Thread.sleep(20); // a sampling period, not a synchronisation
                } catch (InterruptedException e) {
                  return;
                }
              }
            },
            "heap-sampler");
    sampler.setDaemon(true);
    sampler.start();
    long started = System.nanoTime();
    try (MemoryCheckpointStore store = new MemoryCheckpointStore();
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(url)
                .slot(name)
                .publication(name)
                .createSlot(true)
                .checkpointStore(store)
                .memoryBudget(Long.parseLong(args[3]))
                .snapshot(SnapshotMode.INITIAL_ONLY)
                .snapshotParallelism(Integer.parseInt(args[4]))
                .build()) {
      source
          .start(
              (event, checkpoints) -> {
                if (event instanceof ReadEvent r) {
                  int id = (Integer) r.after().get("id");
                  if (seen.get(id)) {
                    duplicates.incrementAndGet();
                  }
                  seen.set(id);
                } else {
                  other.incrementAndGet();
                }
                checkpoints.acknowledge(event.offset()); // per event, durable (the default)
              })
          .get(20, TimeUnit.MINUTES);
      long millis = (System.nanoTime() - started) / 1_000_000;
      sampler.interrupt();
      System.out.printf(
          "distinct=%d duplicates=%d other=%d rowsRead=%d maxHeapUsed=%d" + " millis=%d%n",
          seen.cardinality(),
          duplicates.get(),
          other.get(),
          source.metrics().snapshotRowsRead(),
          maxUsed.get(),
          millis);
    }
  }
}
