package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import java.util.Arrays;
import java.util.List;

/**
 * Turns runs of acknowledged event positions, in ascending order, into the acknowledged ranges of
 * the pending transactions they fall in, for a {@link CdcCheckpoint}. One instance is reused by
 * every snapshot of a coordinator (under its monitor), so a snapshot allocates only what it
 * returns.
 */
final class CheckpointCollector {

  private PendingTransactions txs;
  private List<CdcCheckpoint.PartialTransaction> partial;
  private long seq;
  private int[] ranges = new int[16];
  private int n;

  /**
   * Starts collecting for one snapshot.
   *
   * @param txs the pending transactions
   * @param head the oldest pending sequence number: runs start at or after its first event
   * @param partial where each transaction with acknowledged events is added
   * @return this
   */
  CheckpointCollector reset(
      PendingTransactions txs, long head, List<CdcCheckpoint.PartialTransaction> partial) {
    this.txs = txs;
    this.seq = head;
    this.partial = partial;
    this.n = 0;
    return this;
  }

  /** Adds the acknowledged positions [from, to), split at transaction boundaries. */
  void run(long from, long to) {
    while (from < to) {
      long txFirst = txs.first(seq);
      long txLast = txs.last(seq);
      if (txLast <= from) {
        flush();
        seq++;
        continue;
      }
      long upTo = Math.min(to, txLast);
      add((int) (from - txFirst), (int) (upTo - txFirst));
      from = upTo;
    }
  }

  /** Adds the last transaction's ranges and lets go of the ring and the list. */
  void finish(long tail) {
    if (seq < tail) {
      flush();
    }
    txs = null;
    partial = null;
  }

  private void add(int from, int to) {
    if (n > 0 && ranges[n - 1] == from) {
      ranges[n - 1] = to;
      return;
    }
    if (n == ranges.length) {
      ranges = Arrays.copyOf(ranges, n * 2);
    }
    ranges[n++] = from;
    ranges[n++] = to;
  }

  private void flush() {
    if (n > 0) {
      partial.add(
          CdcCheckpoint.PartialTransaction.ofRanges(
              PgLsn.of(txs.end(seq)), txs.count(seq), Arrays.copyOf(ranges, n)));
      n = 0;
    }
  }
}
