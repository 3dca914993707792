package io.datum.cdc.event;

import io.datum.cdc.PgLsn;
import java.util.Objects;

/** Helpers of the event records' convenience constructors. */
final class Events {

  private Events() {}

  /**
   * Returns the transaction's commit LSN, the LSN of events built without one of their own.
   *
   * @throws NullPointerException if {@code transaction} is null
   */
  static PgLsn commitLsn(TransactionInfo transaction) {
    return Objects.requireNonNull(transaction, "transaction").commitLsn();
  }
}
