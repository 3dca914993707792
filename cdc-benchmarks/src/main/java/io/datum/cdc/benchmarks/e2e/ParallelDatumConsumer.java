package io.datum.cdc.benchmarks.e2e;

import io.datum.cdc.MemoryCheckpointStore;
import io.datum.cdc.core.PgCdcSource;
import io.datum.cdc.core.config.AcknowledgementDurability;
import io.datum.cdc.core.config.HandlerOrdering;
import io.datum.cdc.event.UpdateEvent;

/**
 * Child JVM of {@link ParallelHandlerHarness}: datum-cdc with {@code handlerThreads(n, KEY)}, each
 * update event's work ({@link ParallelWork}) done and then acknowledged (per-event durability into
 * {@code memory:}); stops after the expected number of updates.
 *
 * <p>Arguments: jdbcUrl user password slot publication expectedEvents timeoutSeconds threads
 * handler sinkUrl [event|transaction: the acknowledgement durability, event by default]
 */
public final class ParallelDatumConsumer {
  private ParallelDatumConsumer() {}

  /**
   * Runs the consumer.
   *
   * @param args see the class comment
   * @throws Exception if the source fails
   */
  public static void main(String[] args) throws Exception {
    long expected = Long.parseLong(args[5]);
    long timeoutSeconds = Long.parseLong(args[6]);
    int threads = Integer.parseInt(args[7]);
    ParallelWork work = new ParallelWork(args[8], args[9]);
    ConsumerProbe probe = new ConsumerProbe(expected);
    try (PgCdcSource source =
        PgCdcSource.builder()
            .jdbcUrl(args[0])
            .user(args[1])
            .password(args[2])
            .slot(args[3])
            .publication(args[4])
            .createSlot(false)
            .trustSlotPosition(true)
            .checkpointStore(new MemoryCheckpointStore())
            .handlerThreads(threads, HandlerOrdering.KEY)
            .acknowledgementDurability(
                args.length > 10 && args[10].equals("transaction")
                    ? AcknowledgementDurability.TRANSACTION
                    : AcknowledgementDurability.EVENT)
            .build()) {
      source.start(
          (event, checkpoints) -> {
            if (event instanceof UpdateEvent u) {
              work.apply((Integer) u.after().get("id"), (Integer) u.after().get("v"));
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
