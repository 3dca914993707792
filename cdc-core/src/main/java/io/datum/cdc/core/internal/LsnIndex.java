package io.datum.cdc.core.internal;

/**
 * An open-addressing hash map from a transaction's end LSN (never 0) to its sequence number in the
 * {@link FeedbackCoordinator}'s ring: O(1) expected lookups without boxing, so an acknowledgement
 * allocates nothing. Linear probing with backward-shift deletion; grows at half load. Not
 * thread-safe.
 */
final class LsnIndex {

  private static final long EMPTY = 0L;
  private long[] keys;
  private long[] values;
  private int mask;
  private int size;

  LsnIndex(int initialCapacity) {
    int capacity = Integer.highestOneBit(Math.max(16, initialCapacity) - 1) << 1;
    keys = new long[capacity];
    values = new long[capacity];
    mask = capacity - 1;
  }

  int size() {
    return size;
  }

  /** Returns the value of {@code key}, or -1 if absent. */
  long get(long key) {
    for (int i = slot(key); ; i = (i + 1) & mask) {
      long k = keys[i];
      if (k == key) {
        return values[i];
      }
      if (k == EMPTY) {
        return -1;
      }
    }
  }

  /** Maps {@code key} (not 0) to {@code value}, replacing an earlier value. */
  void put(long key, long value) {
    if ((size + 1) * 2 > keys.length) {
      grow();
    }
    int i = slot(key);
    while (keys[i] != EMPTY && keys[i] != key) {
      i = (i + 1) & mask;
    }
    if (keys[i] == EMPTY) {
      size++;
    }
    keys[i] = key;
    values[i] = value;
  }

  /** Removes {@code key} if present. */
  void remove(long key) {
    int i = slot(key);
    while (keys[i] != key) {
      if (keys[i] == EMPTY) {
        return;
      }
      i = (i + 1) & mask;
    }
    size--;
    // backward-shift deletion keeps every probe sequence unbroken
    int hole = i;
    for (int j = (hole + 1) & mask; keys[j] != EMPTY; j = (j + 1) & mask) {
      int home = slot(keys[j]);
      boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        keys[hole] = keys[j];
        values[hole] = values[j];
        hole = j;
      }
    }
    keys[hole] = EMPTY;
  }

  private int slot(long key) {
    long h = key * 0x9E3779B97F4A7C15L; // Fibonacci hashing: LSNs are not uniformly spread
    return (int) (h ^ (h >>> 32)) & mask;
  }

  private void grow() {
    long[] oldKeys = keys;
    long[] oldValues = values;
    keys = new long[oldKeys.length * 2];
    values = new long[oldKeys.length * 2];
    mask = keys.length - 1;
    size = 0;
    for (int i = 0; i < oldKeys.length; i++) {
      if (oldKeys[i] != EMPTY) {
        put(oldKeys[i], oldValues[i]);
      }
    }
  }
}
