package io.datum.cdc.benchmarks.snapshot;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.benchmarks.e2e.ConsumerProbe;
import io.datum.cdc.benchmarks.e2e.ValueReader;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.SnapshotMode;
import io.datum.cdc.event.ReadEvent;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Child JVM of {@link SnapshotHarness}: datum-cdc's {@link PgCdcSource} with {@code
 * snapshot(SnapshotMode.INITIAL_ONLY)} and {@code snapshotParallelism} as given, on the harness's
 * publication and a slot of a new name it creates, a {@link MemoryCheckpointStore} and
 * per-transaction durability (here: per chunk); a handler that counts {@link ReadEvent}s and
 * acknowledges every event. It reports once the source's future completes (every read row
 * acknowledged).
 */
public final class DatumSnapshotConsumer {
  private DatumSnapshotConsumer() {}

  /**
   * Runs the consumer.
   *
   * @param args jdbcUrl user password slot publication expectedRows timeoutSeconds parallelism
   *     [mode]; an empty password as {@code -}; mode {@code values}: the handler reads every column
   *     value of every row ({@link ValueReader}) before acknowledging it, otherwise it counts only
   * @throws Exception if the source fails
   */
  public static void main(String[] args) throws Exception {
    String jdbcUrl = args[0], user = args[1];
    String password = args[2].equals("-") ? "" : args[2];
    String slot = args[3], publication = args[4];
    long expected = Long.parseLong(args[5]);
    long timeoutSeconds = Long.parseLong(args[6]);
    int parallelism = Integer.parseInt(args[7]);
    boolean values = args.length > 8 && args[8].equals("values");
    ConsumerProbe probe = new ConsumerProbe(expected);
    try (MemoryCheckpointStore store = new MemoryCheckpointStore();
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(jdbcUrl)
                .user(user)
                .password(password)
                .slot(slot)
                .publication(publication)
                .createSlot(true)
                .checkpointStore(store)
                .snapshot(SnapshotMode.INITIAL_ONLY)
                .snapshotParallelism(parallelism)
                .acknowledgementDurability(AcknowledgementDurability.TRANSACTION)
                .build()) {
      CompletableFuture<Void> done =
          source.start(
              (event, checkpoints) -> {
                if (values) {
                  probe.values(ValueReader.hash(event));
                }
                if (event instanceof ReadEvent) {
                  probe.event();
                }
                checkpoints.acknowledge(event.offset());
              });
      try {
        done.get(timeoutSeconds, TimeUnit.SECONDS);
      } catch (TimeoutException e) {
        System.err.println(
            "timed out after " + timeoutSeconds + " s with " + probe.events() + " rows");
      }
      probe.report();
    }
    System.exit(0);
  }
}
