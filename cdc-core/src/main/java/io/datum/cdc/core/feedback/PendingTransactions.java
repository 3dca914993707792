package io.datum.cdc.core.feedback;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The ring of pending transactions of a {@link FeedbackCoordinator}: entries of four longs (end
 * LSN, first event position, event count, commit time: 32 bytes, two entries per cache line)
 * indexed by a sequence number (assigned at registration, consecutive) modulo the capacity, a power
 * of two.
 *
 * <p>Written by the registering thread only: an entry's end LSN and commit time first, then its
 * position and count with release, so a reader that sees either new value sees the new end LSN too.
 * Readers on other threads may see an entry reused for a later transaction while they read it; they
 * check the end LSN before and after. A ring is never written again once the coordinator replaced
 * it (grown or reset), so late readers of the old ring stay consistent.
 */
final class PendingTransactions {

  private static final VarHandle LONGS = MethodHandles.arrayElementVarHandle(long[].class);
  private static final int STRIDE = 4;

  private final long[] entries;
  private final int mask;

  /**
   * @param capacity the number of entries, a power of two
   */
  PendingTransactions(int capacity) {
    entries = new long[capacity * STRIDE];
    mask = capacity - 1;
  }

  /** Returns the number of entries. */
  int capacity() {
    return mask + 1;
  }

  private int at(long seq) {
    return ((int) seq & mask) * STRIDE;
  }

  /** Returns the end LSN of transaction {@code seq} (read with acquire: entries are reused). */
  long end(long seq) {
    return (long) LONGS.getAcquire(entries, at(seq));
  }

  /** Returns the position of the first event of transaction {@code seq}. */
  long first(long seq) {
    return (long) LONGS.getAcquire(entries, at(seq) + 1);
  }

  /** Returns the event count of transaction {@code seq}. */
  int count(long seq) {
    return (int) (long) LONGS.getAcquire(entries, at(seq) + 2);
  }

  /**
   * Returns the commit time of transaction {@code seq} in microseconds since 1970-01-01 UTC, or 0
   * if unknown. Read by the coordinator under its monitor, for pending transactions only.
   */
  long commitMicros(long seq) {
    return entries[at(seq) + 3];
  }

  /** Returns the position after the last event of transaction {@code seq}. */
  long last(long seq) {
    int i = at(seq);
    return entries[i + 1] + entries[i + 2];
  }

  /** Writes the entry of transaction {@code seq}; the registering thread only. */
  void put(long seq, long txEnd, long txFirst, int txCount, long txCommitMicros) {
    int i = at(seq);
    entries[i] = txEnd;
    entries[i + 3] = txCommitMicros;
    LONGS.setRelease(entries, i + 1, txFirst);
    LONGS.setRelease(entries, i + 2, (long) txCount);
  }

  /**
   * Returns a copy of the entries {@code [head, tail)} in a ring of twice the capacity.
   *
   * @param head the oldest pending sequence number
   * @param tail one past the newest
   * @return the new ring
   */
  PendingTransactions grown(long head, long tail) {
    PendingTransactions grown = new PendingTransactions(capacity() * 2);
    for (long seq = head; seq < tail; seq++) {
      grown.put(seq, end(seq), first(seq), count(seq), commitMicros(seq));
    }
    return grown;
  }

  /**
   * Returns the sequence number of the pending transaction ending at {@code end}, or -1: the hint
   * and the one after it first (acknowledgements in commit order hit them), then an interpolation
   * search, since end LSNs ascend with sequence numbers. A stale view (a ring replaced, an entry
   * reused) at worst misses; the caller checks the entry it gets.
   *
   * @param end the end LSN looked for
   * @param head the oldest pending sequence number
   * @param tail one past the newest
   * @param hint the sequence number found last, a guess
   * @return the sequence number, or -1 if no pending transaction ends there
   */
  long locate(long end, long head, long tail, long hint) {
    if (hint >= head && hint < tail) {
      if (end(hint) == end) {
        return hint;
      }
      if (hint + 1 < tail && end(hint + 1) == end) {
        return hint + 1;
      }
    }
    if (head == tail) {
      return -1;
    }
    if (end(head) == end) {
      return head;
    }
    // interpolation search: end LSNs of consecutive transactions grow roughly evenly, so the
    // estimate lands on or next to the target; binary steps bound the worst case
    long lo = head + 1;
    long hi = Math.min(tail, head + capacity()) - 1;
    boolean interpolate = true;
    while (lo <= hi) {
      long loEnd = end(lo);
      long hiEnd = end(hi);
      if (Long.compareUnsigned(end, loEnd) < 0 || Long.compareUnsigned(end, hiEnd) > 0) {
        return -1;
      }
      long mid;
      if (interpolate && hiEnd != loEnd) {
        double fraction = (double) (end - loEnd) / (double) (hiEnd - loEnd); // spans < 2^63
        mid = lo + (long) (fraction * (hi - lo));
        mid = Math.max(lo, Math.min(hi, mid));
      } else {
        mid = (lo + hi) >>> 1;
      }
      interpolate = !interpolate; // alternate, so a skewed distribution still halves the range
      int c = Long.compareUnsigned(end(mid), end);
      if (c < 0) {
        lo = mid + 1;
      } else if (c > 0) {
        hi = mid - 1;
      } else {
        return mid;
      }
    }
    return -1;
  }

  /**
   * Returns the newest transaction of {@code [head, tail)} whose events all lie before position
   * {@code prefix}, given that the head's do: gallops from the head (usually only a few complete),
   * then halves. The last positions of consecutive transactions ascend.
   *
   * @param head the oldest pending sequence number; {@code last(head) <= prefix}
   * @param tail one past the newest
   * @param prefix the first position not acknowledged
   * @return the sequence number of the newest complete transaction
   */
  long newestCompleteBefore(long head, long tail, long prefix) {
    long lo = head; // completes
    long step = 1;
    while (lo + step < tail && last(lo + step) <= prefix) {
      lo += step;
      step <<= 1;
    }
    long hi = Math.min(tail, lo + step); // first that does not, or tail
    while (hi - lo > 1) {
      long mid = (lo + hi) >>> 1;
      if (last(mid) <= prefix) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    return lo;
  }
}
