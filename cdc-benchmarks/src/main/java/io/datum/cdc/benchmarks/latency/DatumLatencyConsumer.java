package io.datum.cdc.benchmarks.latency;

import io.datum.cdc.CdcCheckpointStore;
import io.datum.cdc.CheckpointStores;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.InsertEvent;

/**
 * Child JVM of {@link LatencyHarness}: datum-cdc's {@link PgCdcSource} with its defaults (per-event
 * durability) on the slot the harness just created (trusting its position: the store is new), a
 * {@code file:} checkpoint store, and a handler that records each insert's commit-to-handler
 * latency and acknowledges it with {@code acknowledge} (durable before it returns) or {@code
 * acknowledgeAsync} (stored in the background).
 *
 * <p>Arguments: jdbcUrl user password slot publication storeUri mode ({@code acknowledge} or {@code
 * async}); an empty password as {@code -}.
 */
public final class DatumLatencyConsumer {
  private DatumLatencyConsumer() {}

  /**
   * Runs the consumer until the END row.
   *
   * @param args as above
   * @throws Exception if the source fails
   */
  public static void main(String[] args) throws Exception {
    boolean async = args[6].equals("async");
    Latencies latencies = new Latencies();
    ChildProtocol protocol = new ChildProtocol();
    try (CdcCheckpointStore store = CheckpointStores.open(args[5]);
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(args[0])
                .user(args[1])
                .password(args[2].equals("-") ? "" : args[2])
                .slot(args[3])
                .publication(args[4])
                .createSlot(false)
                .trustSlotPosition(true)
                .checkpointStore(store)
                .build()) {
      source.start(
          (event, checkpoints) -> {
            long now = Latencies.nowMicros();
            if (event instanceof InsertEvent insert) {
              if (ChildProtocol.END.equals(insert.after().get("payload"))) {
                protocol.end(latencies);
              } else {
                latencies.record(Latencies.micros(insert.transaction().commitTime()), now);
              }
            }
            if (async) {
              checkpoints.acknowledgeAsync(event.offset());
            } else {
              checkpoints.acknowledge(event.offset());
            }
          });
      ChildProtocol.ready();
      protocol.awaitEnd();
      source.stop();
    }
    System.exit(0);
  }
}
