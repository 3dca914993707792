package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.event.InsertEvent;
import io.datum.cdc.event.UpdateEvent;

/**
 * Child JVM of {@link EndToEndHarness}: datum-cdc's {@link PgCdcSource} on an existing slot, a
 * handler that acknowledges every event, stopping after the expected number of row events.
 *
 * <p>Arguments: jdbcUrl user password slot publication expectedEvents timeoutSeconds
 */
public final class DatumConsumer {
  private DatumConsumer() {}

  public static void main(String[] args) throws Exception {
    String jdbcUrl = args[0],
        user = args[1],
        password = args[2],
        slot = args[3],
        publication = args[4];
    long expected = Long.parseLong(args[5]);
    long timeoutSeconds = Long.parseLong(args[6]);
    ConsumerProbe probe = new ConsumerProbe(expected);
    try (MemoryCheckpointStore store = new MemoryCheckpointStore();
        PgCdcSource source =
            PgCdcSource.builder()
                .jdbcUrl(jdbcUrl)
                .user(user)
                .password(password)
                .slot(slot)
                .publication(publication)
                .createSlot(false)
                .trustSlotPosition(true)
                .checkpointStore(store)
                .build()) {
      source.start(
          (event, checkpoints) -> {
            if (event instanceof InsertEvent || event instanceof UpdateEvent) {
              probe.event();
            }
            checkpoints.acknowledge(event.offset());
          });
      probe.await(timeoutSeconds);
      probe.report();
      source.stop();
    }
    System.exit(0);
  }
}
