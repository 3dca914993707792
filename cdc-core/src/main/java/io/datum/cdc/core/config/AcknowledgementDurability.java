package io.datum.cdc.core.config;

/**
 * When the source writes acknowledgements to its checkpoint store, which decides what a crash (kill
 * -9, power loss) may deliver again. A graceful stop stores everything in both modes.
 */
public enum AcknowledgementDurability {
  /**
   * The store is written when the watermark moves (once per transaction acknowledged in commit
   * order), when a keepalive moves it, and at stop. After a crash, events acknowledged since the
   * last store are delivered again (at most the acknowledged events of transactions not yet
   * completely acknowledged). Cheapest: one store write per transaction.
   */
  TRANSACTION,
  /**
   * Every acknowledgement returns only after a stored checkpoint includes it, so no event whose
   * {@code acknowledge()} returned is delivered again after a crash. Concurrent acknowledgements
   * share one store write (group commit); a single thread acknowledging event by event pays one
   * store write (an fsync for durable stores) per event, so prefer {@code checkpointTransaction}
   * for large transactions. The default.
   */
  EVENT
}
