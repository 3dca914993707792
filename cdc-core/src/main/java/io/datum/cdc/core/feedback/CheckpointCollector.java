package io.datum.cdc.core.feedback;

import io.datum.cdc.CdcCheckpoint;
import io.datum.cdc.PgLsn;
import java.util.Arrays;
import java.util.List;

/**
 * Turns runs of acknowledged event positions, in ascending order, into a {@link CdcCheckpoint}'s
 * lists: a stretch of transactions whose events all lie inside one run of positions becomes one
 * {@link CdcCheckpoint.AcknowledgedRun}, found by galloping searches over the pending transactions'
 * positions; a transaction a run of positions starts or ends inside gets the acknowledged ranges of
 * a {@link CdcCheckpoint.PartialTransaction}. So a checkpoint costs O(runs of positions &times; log
 * transactions), not O(transactions), and its size grows with the gaps in what was acknowledged.
 * One instance is reused by every checkpoint of a coordinator (under its monitor), so a checkpoint
 * allocates only what it returns.
 */
final class CheckpointCollector {

  private PendingTransactions txs;
  private List<CdcCheckpoint.PartialTransaction> partial;
  private List<CdcCheckpoint.AcknowledgedRun> runs;

  /** Transactions before this one are done with. */
  private long seq;

  private long tail;

  /** The transaction whose ranges are being collected, or -1. */
  private long current = -1;

  private int[] ranges = new int[16];
  private int n;

  /**
   * The longest run of set bits the last checkpoint found, {@code [knownSetFrom, knownSetTo)} in
   * {@code knownSetRing}: still set while that ring is current (see {@link #runEnd}).
   */
  private long[] knownSetRing;

  private long knownSetFrom;
  private long knownSetTo;

  /**
   * Collects one checkpoint's acknowledged events beyond the prefix: scans the bit ring from the
   * prefix to where acknowledgements end (the newest acknowledged word's end, or the last
   * registered position, whichever is first), skipping words the summary marks empty and the
   * longest run the previous checkpoint found, and adds each run of acknowledged positions. The
   * events of the head transaction before the prefix are acknowledged without looking. Under the
   * coordinator's monitor.
   *
   * @param txs the pending transactions
   * @param head the oldest pending sequence number
   * @param tail one past the newest; after {@code head}
   * @param acks the acknowledgement bits, their summary and prefix
   * @param partial where each transaction with some acknowledged events is added
   * @param runs where each stretch of fully acknowledged transactions is added
   */
  void collect(
      PendingTransactions txs,
      long head,
      long tail,
      AckRing acks,
      List<CdcCheckpoint.PartialTransaction> partial,
      List<CdcCheckpoint.AcknowledgedRun> runs) {
    long[] ring = acks.bits;
    long prefix = acks.prefix;
    long scanEnd = Math.min(txs.last(tail - 1), (acks.maxAckedWord + 1) * AckRing.EVENTS_PER_WORD);
    long headFirst = txs.first(head);
    if (headFirst < prefix) {
      scanEnd = Math.max(scanEnd, prefix);
    }
    long[] summary = acks.occupied;
    long runStart =
        headFirst < prefix ? headFirst : AckRing.nextSet(ring, summary, prefix, scanEnd);
    if (runStart >= scanEnd) {
      return; // nothing acknowledged beyond the watermark
    }
    reset(txs, head, tail, partial, runs);
    long runEnd = runStart < prefix ? prefix : runEnd(ring, runStart, scanEnd);
    long longestFrom = runStart;
    long longestTo = runEnd;
    while (true) {
      run(runStart, runEnd);
      if (runEnd - runStart > longestTo - longestFrom) {
        longestFrom = runStart;
        longestTo = runEnd;
      }
      runStart = AckRing.nextSet(ring, summary, runEnd, scanEnd);
      if (runStart >= scanEnd) {
        break;
      }
      runEnd = runEnd(ring, runStart, scanEnd);
    }
    finish();
    knownSetRing = ring;
    knownSetFrom = Math.max(longestFrom, prefix);
    knownSetTo = longestTo;
  }

  /**
   * The end of the run of set bits starting at {@code from} (at or after the prefix): the first
   * clear position before {@code limit}, or {@code limit}. Skips what the last checkpoint found
   * set: bits at or after the prefix are never cleared in the same ring (a word starts a new lap
   * only after the prefix passed it), so a lagging acknowledgement far behind the others costs a
   * checkpoint only the words acknowledged since, not the whole lead.
   */
  private long runEnd(long[] ring, long from, long limit) {
    long p = from;
    if (ring == knownSetRing && p >= knownSetFrom && p < knownSetTo) {
      p = Math.min(knownSetTo, limit);
    }
    return AckRing.nextClear(ring, p, limit);
  }

  /**
   * Starts collecting for one checkpoint.
   *
   * @param txs the pending transactions
   * @param head the oldest pending sequence number: runs start at or after its first event
   * @param tail one past the newest
   * @param partial where each transaction with some acknowledged events is added
   * @param runs where each stretch of fully acknowledged transactions is added
   * @return this
   */
  private CheckpointCollector reset(
      PendingTransactions txs,
      long head,
      long tail,
      List<CdcCheckpoint.PartialTransaction> partial,
      List<CdcCheckpoint.AcknowledgedRun> runs) {
    this.txs = txs;
    this.seq = head;
    this.tail = tail;
    this.partial = partial;
    this.runs = runs;
    this.current = -1;
    this.n = 0;
    return this;
  }

  /** Adds the acknowledged positions [from, to), ascending and after those added before. */
  private void run(long from, long to) {
    while (from < to) {
      long s = firstEndingAfter(from);
      if (s >= tail) {
        return;
      }
      if (s != current) {
        flush();
        current = s;
      }
      long first = txs.first(s);
      long last = txs.last(s);
      if (first == from && last <= to && n == 0) {
        // s and the transactions after it whose events all lie before `to` are acknowledged
        long e = lastEndingBy(to, s);
        runs.add(new CdcCheckpoint.AcknowledgedRun(PgLsn.of(txs.end(s)), PgLsn.of(txs.end(e))));
        current = -1;
        seq = e + 1;
        from = txs.last(e);
        continue;
      }
      long upTo = Math.min(to, last);
      add((int) (from - first), (int) (upTo - first));
      seq = s;
      from = upTo;
    }
  }

  /** Adds the last transaction's ranges and lets go of the ring and the lists. */
  private void finish() {
    flush();
    txs = null;
    partial = null;
    runs = null;
  }

  /**
   * The first transaction from {@link #seq} whose events end after {@code position}: the one
   * holding it (transactions without events hold none). Gallops, then halves.
   */
  private long firstEndingAfter(long position) {
    long lo = seq;
    if (lo >= tail || txs.last(lo) > position) {
      return lo;
    }
    long step = 1;
    while (lo + step < tail && txs.last(lo + step) <= position) {
      lo += step;
      step <<= 1;
    }
    long hi = Math.min(tail, lo + step); // last(lo) <= position < last(hi), or hi == tail
    while (hi - lo > 1) {
      long mid = (lo + hi) >>> 1;
      if (txs.last(mid) <= position) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return hi;
  }

  /**
   * The newest transaction from {@code s} (which qualifies) whose events all lie before {@code to}.
   */
  private long lastEndingBy(long to, long s) {
    long lo = s;
    long step = 1;
    while (lo + step < tail && txs.last(lo + step) <= to) {
      lo += step;
      step <<= 1;
    }
    long hi = Math.min(tail, lo + step);
    while (hi - lo > 1) {
      long mid = (lo + hi) >>> 1;
      if (txs.last(mid) <= to) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
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
              PgLsn.of(txs.end(current)), txs.count(current), Arrays.copyOf(ranges, n)));
      n = 0;
    }
    current = -1;
  }
}
