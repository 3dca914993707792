package io.datum.cdc.benchmarks.coordinator;

import io.datum.cdc.CdcOffset;
import io.datum.cdc.PgLsn;
import java.util.SplittableRandom;

/**
 * One batch of acknowledgements, the unit a benchmark invocation measures: {@link #BATCH} events in
 * transactions of {@link #eventsPerTx} events each, and the order in which the application
 * acknowledges them.
 *
 * <p>Event {@code e} is event {@code e % eventsPerTx} of transaction {@code e / eventsPerTx};
 * transactions are numbered in commit order. Names, as given to {@code -p workload=...}:
 *
 * <ul>
 *   <li>{@code inOrder_N}: transactions of {@code N} events, every event acknowledged in commit
 *       order (the common case: one consumer thread);
 *   <li>{@code shuffledW_N}: transactions of {@code N} events; the batch is cut into windows of
 *       {@code W} consecutive events and each window is acknowledged in a random order (seeded, the
 *       same in every run and for every implementation), as a pool of workers finishing events out
 *       of order would.
 * </ul>
 */
final class AckWorkload {

  /** Acknowledgements per benchmark invocation (divisible by every window and drain interval). */
  static final int BATCH = 10_000;

  /** WAL bytes between the end LSNs of consecutive transactions. */
  static final long LSN_STEP = 0x100;

  final String name;
  final int eventsPerTx;
  final int window;
  final int transactions;

  /** The event ids of the batch in the order they are acknowledged. */
  final int[] ackOrder;

  private AckWorkload(String name, int eventsPerTx, int window) {
    if (eventsPerTx < 1 || BATCH % eventsPerTx != 0) {
      throw new IllegalArgumentException(
          "workload " + name + ": events per transaction must divide " + BATCH);
    }
    if (window < 1 || BATCH % window != 0) {
      throw new IllegalArgumentException("workload " + name + ": window must divide " + BATCH);
    }
    this.name = name;
    this.eventsPerTx = eventsPerTx;
    this.window = window;
    this.transactions = BATCH / eventsPerTx;
    this.ackOrder = new int[BATCH];
    for (int e = 0; e < BATCH; e++) {
      ackOrder[e] = e;
    }
    if (window > 1) {
      SplittableRandom random = new SplittableRandom(0x5EEDL);
      for (int start = 0; start < BATCH; start += window) {
        for (int i = window - 1; i > 0; i--) { // Fisher-Yates within the window
          int j = random.nextInt(i + 1);
          int t = ackOrder[start + i];
          ackOrder[start + i] = ackOrder[start + j];
          ackOrder[start + j] = t;
        }
      }
    }
  }

  /**
   * Parses a workload name ({@code inOrder_1}, {@code shuffled1000_100}, ...).
   *
   * @throws IllegalArgumentException if the name is not of that form
   */
  static AckWorkload parse(String name) {
    int underscore = name.indexOf('_');
    if (underscore > 0) {
      String order = name.substring(0, underscore);
      int eventsPerTx = Integer.parseInt(name.substring(underscore + 1));
      if (order.equals("inOrder")) {
        return new AckWorkload(name, eventsPerTx, 1);
      }
      if (order.startsWith("shuffled")) {
        return new AckWorkload(name, eventsPerTx, Integer.parseInt(order.substring(8)));
      }
    }
    throw new IllegalArgumentException(
        "workload \""
            + name
            + "\": expected inOrder_<eventsPerTx> or shuffled<window>_<eventsPerTx>");
  }

  /** Returns the transaction (in commit order) of event {@code e}. */
  int transactionOf(int e) {
    return e / eventsPerTx;
  }

  /** Returns the index of event {@code e} in its transaction. */
  int indexOf(int e) {
    return e % eventsPerTx;
  }

  /**
   * Fills {@code txEnds} with the end LSNs of the batch's transactions, the {@code transactions}
   * that follow {@code previousEnd}, and {@code offsets} with the offsets of its events in
   * acknowledgement order, as the source would build them for delivery.
   *
   * @param slot the slot of the offsets
   * @param previousEnd the end LSN of the transaction before the batch
   * @return the end LSN of the batch's last transaction
   */
  long fill(String slot, long previousEnd, PgLsn[] txEnds, CdcOffset[] offsets) {
    PgLsn[] commits = new PgLsn[transactions];
    for (int t = 0; t < transactions; t++) {
      long end = previousEnd + (t + 1) * LSN_STEP;
      txEnds[t] = PgLsn.of(end);
      commits[t] = PgLsn.of(end - 0x30);
    }
    for (int i = 0; i < BATCH; i++) {
      int e = ackOrder[i];
      int t = transactionOf(e);
      long xid = (txEnds[t].asLong() / LSN_STEP) & 0xFFFF_FFFFL;
      offsets[i] = new CdcOffset(slot, txEnds[t], commits[t], xid, indexOf(e), eventsPerTx);
    }
    return txEnds[transactions - 1].asLong();
  }

  /**
   * Checks that a drain interval fits the batch, so the last drain of an invocation comes after its
   * last acknowledgement.
   */
  static void requireDrainInterval(int drainEvery) {
    if (drainEvery < 1 || BATCH % drainEvery != 0) {
      throw new IllegalArgumentException("drainEvery must divide " + BATCH + ", was " + drainEvery);
    }
  }
}
