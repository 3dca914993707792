package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import io.datum.cdc.core.feedback.FeedbackCoordinator;

/**
 * The benchmarks' only contact with datum-cdc's feedback coordinator: registers transactions as the
 * replication loop does, acknowledges events as {@code CdcCheckpointHandle.checkpoint} does, and
 * reads the watermark as the status update does. When the coordinator's API changes, adapt this
 * class only.
 */
public final class DatumCoordinatorDriver {

  private final FeedbackCoordinator coordinator;

  /**
   * Creates a coordinator for {@code slot} starting at {@code 0/0} (no stored checkpoint).
   *
   * @param slot a valid slot name
   */
  public DatumCoordinatorDriver(String slot) {
    this.coordinator = new FeedbackCoordinator(slot, null);
  }

  /**
   * Registers a committed transaction before its events are delivered, in commit order.
   *
   * @param txEndLsn its end LSN, after every one registered before
   * @param eventCount its number of events
   */
  public void register(PgLsn txEndLsn, int eventCount) {
    coordinator.register(txEndLsn, eventCount);
  }

  /**
   * Acknowledges one event as the handle does with per-event durability (the default): recorded
   * lock-free, the watermark moved when next read.
   *
   * @param offset the event's offset
   * @return true if this call acknowledged it (false for a duplicate)
   */
  public boolean acknowledge(CdcOffset offset) {
    return coordinator.record(offset);
  }

  /**
   * Acknowledges one event as the handle does with per-transaction durability: also moves the
   * watermark when the event completes the acknowledged prefix (then under the coordinator's
   * monitor).
   *
   * @param offset the event's offset
   * @return true if the watermark moved (the handle then stores a checkpoint)
   */
  public boolean acknowledgeAndAdvance(CdcOffset offset) {
    return coordinator.acknowledge(offset);
  }

  /** Returns the watermark as an unsigned 64-bit LSN, moving it over what was acknowledged. */
  public long watermark() {
    return coordinator.watermark().asLong();
  }
}
